import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestRepository } from './test-support';
import { LOOPBACK_ONLY } from '@platform/net';

/**
 * Every operation as a client generated from upstream's protos sends it. Upstream removed the v2 Schema
 * protos before cloudforet-io/api 2.0.435, so the request messages are those of their last version
 * (repository/v2 schema.proto and common.proto, tags 1.12.x), with spaceone.api.core.v1's Query (sort a
 * message `{key, desc, keys}`): every field present, unset ones at their proto3 defaults ("" / [] / {} /
 * SyncMode's zero `UNDEFINED`); message fields left unset (sync_options) are omitted, and of a oneof
 * (SyncOptions' github | git | gitlab) only the one set is sent, as proto3 JSON does.
 */
const PERSON = { type: 'object', properties: { name: { type: 'string' } } };
const REMOTE = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };
const PAGE = { start: 0, limit: 0 };
const QUERY = (over: object = {}) => ({ filter: [], filter_or: [], sort: { key: '', desc: false, keys: [] }, page: PAGE, minimal: false, count_only: false, only: [], keyword: '', ...over });
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: PAGE, distinct: '', keyword: '', ...over });

describe('repository: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestRepository>>;
  let admin: string;
  let base = '';
  const server: Server = createServer((req, res) => {
    if (req.url === '/schemas/key.json') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(JSON.stringify(REMOTE));
    res.writeHead(404).end('not found');
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await createTestRepository({ outbound: LOOPBACK_ONLY, sweepSeconds: 0 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const call = (path: string, body: object) => request(t.app).post(`/repository/v2/schema/${path}`).set('Authorization', admin).send(body);
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const LIST = { schema_id: '', name: '', sync_mode: 'UNDEFINED', remote_repository_name: '', domain_id: 'd1' };
  const ids = async (over: object = {}) => (await ok('list', { query: QUERY({ sort: { key: 'schema_id', desc: false, keys: [] } }), ...LIST, ...over })).results.map((s: { schema_id: string }) => s.schema_id);

  test('create: sync_mode UNDEFINED is not set (NONE); labels [] and tags {} are none', async () => {
    const s = await ok('create', { schema_id: 'person', name: 'Person', sync_mode: 'UNDEFINED', schema: PERSON, labels: [], tags: {}, domain_id: 'd1' });
    expect(s).toMatchObject({ schema_id: 'person', name: 'Person', sync_mode: 'NONE', sync_options: {}, schema: PERSON, labels: [], tags: {}, remote_repository: {} });
    const synced = await ok('create', { schema_id: 'remote', name: 'Remote', sync_mode: 'MANUAL', sync_options: { git: { url: `${base}/schemas/key.json` } }, schema: {}, labels: ['ops'], tags: {}, domain_id: 'd1' });
    expect(synced).toMatchObject({ sync_mode: 'MANUAL', sync_options: { git: { url: `${base}/schemas/key.json` } }, labels: ['ops'] });
  });

  test('update: fields at their defaults change nothing (UNDEFINED keeps the mode)', async () => {
    await ok('update', { schema_id: 'person', name: 'People', sync_mode: 'UNDEFINED', schema: PERSON, labels: ['hr'], tags: { owner: 'hr' }, domain_id: 'd1' });
    const same = await ok('update', { schema_id: 'person', name: '', sync_mode: 'UNDEFINED', schema: PERSON, labels: [], tags: {}, domain_id: 'd1' });
    expect(same).toMatchObject({ name: 'People', sync_mode: 'NONE', labels: ['hr'], tags: { owner: 'hr' } });
    const remote = await ok('update', { schema_id: 'remote', name: '', sync_mode: 'UNDEFINED', schema: {}, labels: [], tags: {}, domain_id: 'd1' });
    expect(remote).toMatchObject({ sync_mode: 'MANUAL', sync_options: { git: { url: `${base}/schemas/key.json` } }, labels: ['ops'] });
  });

  test('sync and get (only [] is every field)', async () => {
    expect((await ok('sync', { schema_id: 'remote', domain_id: 'd1' })).schema).toEqual(REMOTE);
    const got = await ok('get', { schema_id: 'remote', only: [], domain_id: 'd1' });
    expect(got).toMatchObject({ schema_id: 'remote', schema: REMOTE, remote_repository: { repository_type: 'GIT', last_error: '' } });
    expect(await ok('get', { schema_id: 'person', only: ['name'], domain_id: 'd1' })).toEqual({ name: 'People' });
  });

  test('list (SchemaQuery at its defaults lists all; NONE is a value that filters), stat', async () => {
    expect(await ids()).toEqual(['person', 'remote']);
    expect(await ids({ sync_mode: 'NONE' })).toEqual(['person']);
    expect(await ids({ sync_mode: 'MANUAL', name: 'Remote' })).toEqual(['remote']);
    expect((await ok('list', { query: QUERY({ count_only: true }), ...LIST })).total_count).toBe(2);
    expect((await ok('stat', { query: STAT({ distinct: 'sync_mode' }), domain_id: 'd1' })).results.sort()).toEqual(['MANUAL', 'NONE']);
  });

  test('delete', async () => {
    await ok('delete', { schema_id: 'person', domain_id: 'd1' });
    expect(await ids()).toEqual(['remote']);
  });
});
