import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestStatistics } from './test-support';
import { LOOPBACK_ONLY } from '@platform/net';

/**
 * Every operation as a client generated from upstream's protos sends it. Upstream removed Storage from
 * cloudforet-io/api before 2.0.435 (statistics/v1 has schedule, history and resource only), so the request
 * messages are those of its last storage.proto (statistics/v1, tag 1.12.12), with spaceone.api.core.v1's
 * Query (sort a message `{key, desc, keys}`): every field present, unset ones at their proto3 defaults
 * ("" / 0 / false / [] / {}); message fields left unset are omitted, as proto3 JSON does.
 */
const PLUGIN_ID = 'plugin-postgresql-stat-storage';
const PAGE = { start: 0, limit: 0 };
const QUERY = (over: object = {}) => ({ filter: [], filter_or: [], sort: { key: '', desc: false, keys: [] }, page: PAGE, minimal: false, count_only: false, only: [], keyword: '', ...over });
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: PAGE, distinct: '', keyword: '', ...over });

describe('statistics: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestStatistics>>;
  let admin: string;
  let id = '';
  beforeAll(async () => {
    t = await createTestStatistics({ outbound: LOOPBACK_ONLY, verifyTimeoutMs: 3000 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(() => t?.close());
  const call = (path: string, body: object) => request(t.app).post(`/statistics/v1/storage/${path}`).set('Authorization', admin).send(body);
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const LIST = { storage_id: '', name: '', state: '', user_id: '', domain_id: 'd1' };
  const names = async (over: object = {}) => (await ok('list', { query: QUERY({ sort: { key: 'name', desc: false, keys: [] } }), ...LIST, ...over })).results.map((s: { name: string }) => s.name);
  const options = () => ({ host: '127.0.0.1', port: 5432, database: t.db.name });

  test('register: PluginRequest schema "" is the plugin\'s first supported schema; tags {} is none', async () => {
    const s = await ok('register', {
      name: 'primary',
      plugin_info: { plugin_id: PLUGIN_ID, version: '1.1.0', options: options(), secret_data: { username: 'postgres' }, schema: '' },
      tags: {},
      user_id: 'admin',
      domain_id: 'd1',
    });
    id = s.storage_id;
    expect(s).toMatchObject({ name: 'primary', state: 'ENABLED', tags: {}, user_id: 'admin', capability: { supported_schema: ['postgresql_password'] }, plugin_info: { version: '1.1.0', secret_id: expect.stringMatching(/^secret-/) } });
    // required fields stay required: an empty plugin version is a 400
    const bad = await call('register', { name: 'x', plugin_info: { plugin_id: PLUGIN_ID, version: '', options: options(), secret_data: { username: 'postgres' }, schema: '' }, tags: {}, user_id: 'admin', domain_id: 'd1' });
    expect([bad.status, bad.body.error.code]).toEqual([400, expect.stringMatching(/^ERROR_(INVALID|REQUIRED)_PARAMETER$/)]);
  });

  test('update and update-plugin: fields at their defaults change nothing', async () => {
    await ok('update', { storage_id: id, name: 'main', tags: { env: 'prod' }, domain_id: 'd1' });
    expect(await ok('update', { storage_id: id, name: '', tags: {}, domain_id: 'd1' })).toMatchObject({ name: 'main', tags: { env: 'prod' } });
    const before = await ok('get', { storage_id: id, domain_id: 'd1', only: [] });
    const after = await ok('update-plugin', { storage_id: id, version: '', options: {}, secret_data: {}, domain_id: 'd1' });
    expect(after.plugin_info).toEqual(before.plugin_info);
  });

  test('verify-plugin, disable, enable, get (only [] is every field)', async () => {
    expect(await ok('verify-plugin', { storage_id: id, domain_id: 'd1' })).toEqual({});
    expect((await ok('disable', { storage_id: id, domain_id: 'd1' })).state).toBe('DISABLED');
    expect(await names({ state: 'DISABLED' })).toEqual(['main']);
    expect((await ok('enable', { storage_id: id, domain_id: 'd1' })).state).toBe('ENABLED');
    const got = await ok('get', { storage_id: id, domain_id: 'd1', only: [] });
    expect(got).toMatchObject({ storage_id: id, name: 'main', state: 'ENABLED', user_id: 'admin', domain_id: 'd1' });
    expect((await ok('get', { storage_id: id, domain_id: 'd1', only: ['name'] }))).toEqual({ name: 'main' });
  });

  test('list (StorageQuery at its defaults lists all; a set field filters), stat', async () => {
    await ok('register', { name: 'second', plugin_info: { plugin_id: PLUGIN_ID, version: '1.1.0', options: options(), secret_data: { username: 'postgres' }, schema: '' }, tags: { env: 'dev' }, user_id: 'admin', domain_id: 'd1' });
    expect(await names()).toEqual(['main', 'second']);
    expect(await names({ name: 'second', user_id: 'admin' })).toEqual(['second']);
    // state is a free string, as upstream's: a filter; a value no storage has matches none
    expect(await names({ state: 'ENABLED' })).toEqual(['main', 'second']);
    expect(await names({ state: 'ARCHIVED' })).toEqual([]);
    // protobuf's JSON names
    expect((await ok('list', { query: { countOnly: true }, userId: 'admin', domainId: 'd1' })).total_count).toBe(2);
    expect((await ok('list', { query: QUERY({ count_only: true }), ...LIST })).total_count).toBe(2);
    expect((await ok('stat', { query: STAT({ distinct: 'tags.env' }), domain_id: 'd1' })).results.sort()).toEqual(['dev', 'prod']);
  });

  test('deregister', async () => {
    await ok('deregister', { storage_id: id, domain_id: 'd1' });
    expect(await names()).toEqual(['second']);
  });
});
