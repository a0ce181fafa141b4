import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestRepository } from '../test-support';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS, OUTBOUND_REFUSED_MESSAGE } from '@platform/net';

const V1 = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };
const V2 = { type: 'object', properties: { key: { type: 'string' }, region: { type: 'string' } }, required: ['key', 'region'] };

/** What the loopback host serves in its failures: no answer and no last_error may quote it. */
const MARKER = 'MARKER-schema-c41f';

/** A git web host on loopback: raw files at GitHub-, GitLab- and plain-style paths, and misbehaving routes. */
function gitHost() {
  const docs = new Map<string, string>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/redirect') return res.writeHead(302, { location: '/acme/schemas/raw/main/key.json' }).end();
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    if (path === '/slow') return void setTimeout(() => res.end('{}'), 2000);
    if (path === '/huge') return res.end(JSON.stringify({ description: 'x'.repeat(5000) }));
    const body = docs.get(path);
    if (body === undefined) return res.writeHead(404).end(`not found ${MARKER}`);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  });
  return {
    docs,
    hits,
    server,
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('repository schema sync', () => {
  let t: Awaited<ReturnType<typeof createTestRepository>>;
  const host = gitHost();
  let base: string;
  let admin: string;

  beforeAll(async () => {
    base = await host.start();
    t = await createTestRepository({ outbound: LOOPBACK_ONLY, timeoutMs: 500, maxBytes: 4096, maxRedirects: 2, sweepSeconds: 0, intervalSeconds: 60 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    host.docs.set('/acme/schemas/raw/main/key.json', JSON.stringify(V1));
    host.docs.set('/grp/proj/-/raw/main/key.json', JSON.stringify(V2));
    host.docs.set('/plain/key.json', JSON.stringify(V1));
    host.docs.set('/plain/not-json', `hello ${MARKER}`);
    host.docs.set('/plain/array.json', '[1,2]');
    host.docs.set('/plain/invalid.json', JSON.stringify({ type: MARKER }));
  });
  afterAll(async () => {
    await t.close();
    await host.stop();
  });

  const call = (path: string, body: object = {}) => request(t.app).post(`/repository/v2/schema/${path}`).set('Authorization', admin).send(body);
  const create = async (schema_id: string, sync_options: object, sync_mode = 'MANUAL') => {
    const res = await call('create', { schema_id, name: schema_id, schema: {}, sync_mode, sync_options, domain_id: 'd1' });
    expect(res.status).toBe(200);
    return res.body;
  };
  const sync = (schema_id: string) => call('sync', { schema_id, domain_id: 'd1' });

  it('syncs from a GitHub-style file URL, replacing the schema and recording the sync', async () => {
    await create('gh', { github: { url: `${base}/acme/schemas/blob/main/key.json` } });
    const res = await sync('gh');
    expect(res.status).toBe(200);
    expect(res.body.schema).toEqual(V1);
    expect(res.body.remote_repository).toEqual({
      repository_type: 'GITHUB',
      name: 'acme/schemas',
      url: `${base}/acme/schemas/blob/main/key.json`,
      source_url: `${base}/acme/schemas/raw/main/key.json`,
      synced_at: expect.stringMatching(/Z$/),
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      last_error: '',
    });
    // The remote changes: the next sync follows it.
    host.docs.set('/acme/schemas/raw/main/key.json', JSON.stringify(V2));
    const again = await sync('gh');
    expect(again.body.schema).toEqual(V2);
    expect(again.body.remote_repository.digest).not.toBe(res.body.remote_repository.digest);
    expect((await call('get', { schema_id: 'gh', domain_id: 'd1' })).body.schema).toEqual(V2);
  });

  it('syncs from GitLab-style and plain git file URLs, and follows redirects', async () => {
    await create('gl', { gitlab: { url: `${base}/grp/proj/-/blob/main/key.json` } });
    expect((await sync('gl')).body).toMatchObject({ schema: V2, remote_repository: { repository_type: 'GITLAB', name: 'grp/proj' } });
    await create('git', { git: { url: `${base}/plain/key.json` } });
    expect((await sync('git')).body.schema).toEqual(V1);
    await create('redir', { git: { url: `${base}/redirect` } });
    expect((await sync('redir')).body.schema).toEqual(V2);
  });

  it.each([
    ['a missing file', '/plain/missing.json', 'HTTP 404'],
    ['a document that is not JSON', '/plain/not-json', 'not JSON'],
    ['a document that is not an object', '/plain/array.json', 'not a JSON object'],
    ['an invalid JSON Schema', '/plain/invalid.json', 'not a valid JSON Schema'],
    ['a document over the size limit', '/huge', 'larger than 4096 bytes'],
    ['a remote that does not answer in time', '/slow', 'within 500 ms'],
    ['a redirect loop', '/loop', 'more than 2 redirects'],
  ])('fails on %s with the uniform refusal, keeps the schema and records it (the detail only in the log)', async (_label, path, reason) => {
    const id = `bad-${path.replace(/\W/g, '')}`;
    await create(id, { git: { url: `${base}${path}` } });
    const res = await sync(id);
    expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_OUTBOUND_REFUSED']);
    expect(res.body.error.message).toBe(`${OUTBOUND_REFUSED_MESSAGE} (key = sync_options.git.url)`);
    expect(res.text).not.toContain(reason);
    expect(res.text).not.toContain(MARKER);
    const after = (await call('get', { schema_id: id, domain_id: 'd1' })).body;
    expect(after.schema).toEqual({});
    expect(after.remote_repository.last_error).toBe(res.body.error.message);
    expect(after.remote_repository.synced_at).toBe('');
  });

  it('fails cleanly when nothing listens, with the same refusal', async () => {
    const dead = gitHost();
    const url = await dead.start();
    await dead.stop();
    await create('dead', { git: { url: `${url}/x.json` } });
    const res = await sync('dead');
    expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_OUTBOUND_REFUSED']);
    expect(res.body.error.message).toBe(`${OUTBOUND_REFUSED_MESSAGE} (key = sync_options.git.url)`);
    expect(res.text).not.toMatch(/ECONN/);
  });

  it('refuses loopback, private and metadata sources the allow-list does not name (SSRF)', async () => {
    const strict = await createTestRepository({ outbound: NO_PRIVATE_DESTINATIONS, sweepSeconds: 0 });
    try {
      const before = host.hits.get('/plain/key.json') ?? 0;
      for (const [i, url] of [`${base}/plain/key.json`, 'http://localhost:1/x.json', 'http://10.0.0.8/x.json', 'http://169.254.169.254/latest', 'http://[::1]:1/x'].entries()) {
        const c = await request(strict.app)
          .post('/repository/v2/schema/create')
          .set('Authorization', admin)
          .send({ schema_id: `s${i}`, name: 'n', schema: {}, sync_mode: 'MANUAL', sync_options: { git: { url } }, domain_id: 'd1' });
        expect(c.status).toBe(200);
        const res = await request(strict.app).post('/repository/v2/schema/sync').set('Authorization', admin).send({ schema_id: `s${i}`, domain_id: 'd1' });
        expect([url, res.status, res.body.error.code]).toEqual([url, 400, 'ERROR_OUTBOUND_REFUSED']);
        expect(res.body.error.message).toContain('sync_options.git.url');
      }
      expect(host.hits.get('/plain/key.json') ?? 0).toBe(before);
    } finally {
      await strict.close();
    }
  });

  it('never stores a document from a source the schema no longer names', async () => {
    await create('race', { git: { url: `${base}/plain/key.json` } });
    const row = (await t.db.pool.query('SELECT * FROM "schema" WHERE schema_id = $1', ['race'])).rows[0];
    // The source changes after the sync read the row and before it writes.
    await call('update', { schema_id: 'race', domain_id: 'd1', schema: { type: 'string' }, sync_options: { git: { url: `${base}/plain/other.json` } } });
    await expect(t.scheduler['service'].syncRow(row)).rejects.toMatchObject({ code: 'ERROR_SCHEMA_CHANGED_DURING_SYNC', status: 409 });
    expect((await call('get', { schema_id: 'race', domain_id: 'd1' })).body.schema).toEqual({ type: 'string' });
  });

  describe('AUTOMATIC', () => {
    it('syncs due schemas once per interval, even with two replicas sweeping at once', async () => {
      host.docs.set('/auto/a.json', JSON.stringify(V1));
      host.docs.set('/auto/b.json', JSON.stringify(V2));
      await create('auto-a', { git: { url: `${base}/auto/a.json` } }, 'AUTOMATIC');
      await create('auto-b', { git: { url: `${base}/auto/b.json` } }, 'AUTOMATIC');
      await create('auto-broken', { git: { url: `${base}/auto/missing.json` } }, 'AUTOMATIC');
      await create('manual-c', { git: { url: `${base}/auto/a.json` } }, 'MANUAL');
      const hitsBefore = host.hits.get('/auto/a.json') ?? 0;

      const replica = await createTestRepositoryOn(t);
      const now = new Date();
      const [r1, r2] = await Promise.all([t.scheduler.sweep(now), replica.sweep(now)]);
      expect(r1.synced + r2.synced).toBe(2);
      expect(r1.failed + r2.failed).toBe(1);
      // a.json is fetched once (auto-a), not for the MANUAL schema and not by both replicas.
      expect((host.hits.get('/auto/a.json') ?? 0) - hitsBefore).toBe(1);
      expect((await call('get', { schema_id: 'auto-a', domain_id: 'd1' })).body.schema).toEqual(V1);
      expect((await call('get', { schema_id: 'auto-b', domain_id: 'd1' })).body.schema).toEqual(V2);
      expect((await call('get', { schema_id: 'auto-broken', domain_id: 'd1' })).body.remote_repository.last_error).toContain(OUTBOUND_REFUSED_MESSAGE);
      expect((await call('get', { schema_id: 'manual-c', domain_id: 'd1' })).body.schema).toEqual({});

      // Within the interval nothing is due; after it, all three are tried again.
      expect(await t.scheduler.sweep(new Date(now.getTime() + 30_000))).toEqual({ synced: 0, failed: 0 });
      host.docs.set('/auto/missing.json', JSON.stringify(V1));
      expect(await t.scheduler.sweep(new Date(now.getTime() + 61_000))).toEqual({ synced: 3, failed: 0 });
      expect((await call('get', { schema_id: 'auto-broken', domain_id: 'd1' })).body).toMatchObject({ schema: V1, remote_repository: { last_error: '' } });
    });

    it('runs on its own timer and stops cleanly', async () => {
      const timed = await createTestRepository({ outbound: LOOPBACK_ONLY, sweepSeconds: 1, intervalSeconds: 3600 });
      try {
        host.docs.set('/auto/timer.json', JSON.stringify(V2));
        const c = await request(timed.app)
          .post('/repository/v2/schema/create')
          .set('Authorization', admin)
          .send({ schema_id: 'timer', name: 'n', schema: {}, sync_mode: 'AUTOMATIC', sync_options: { git: { url: `${base}/auto/timer.json` } }, domain_id: 'd1' });
        expect(c.status).toBe(200);
        timed.scheduler.start();
        let schema: unknown = {};
        for (let i = 0; i < 30 && JSON.stringify(schema) === '{}'; i++) {
          await new Promise((r) => setTimeout(r, 200));
          schema = (await request(timed.app).post('/repository/v2/schema/get').set('Authorization', admin).send({ schema_id: 'timer', domain_id: 'd1' })).body.schema;
        }
        expect(schema).toEqual(V2);
      } finally {
        await timed.scheduler.stop();
        await timed.close();
      }
    });
  });
});

/** A second scheduler on the same database: another replica of the app. */
async function createTestRepositoryOn(t: Awaited<ReturnType<typeof createTestRepository>>) {
  const { SchemaSyncScheduler } = await import('./scheduler');
  const { SchemaService } = await import('./service');
  return new SchemaSyncScheduler(t.deps, new SchemaService(t.deps));
}
