import request from 'supertest';
import { Client } from 'pg';
import { bearer } from '@platform/testing';
import { createTestStatistics } from '../test-support';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS } from '@platform/net';

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const PLUGIN_ID = 'plugin-postgresql-stat-storage';

describe('statistics storage', () => {
  let t: Awaited<ReturnType<typeof createTestStatistics>>;
  let admin: string;
  let otherAdmin: string;
  let owner: string;
  let member: string;
  const role = `stat_probe_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    t = await createTestStatistics({ outbound: LOOPBACK_ONLY, verifyTimeoutMs: 3000 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    // A role that may log in but not create tables in public (PostgreSQL 15's default for non-owners).
    await t.db.pool.query(`CREATE ROLE "${role}" LOGIN`);
  });
  afterAll(async () => {
    await t.close();
    const c = new Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' });
    await c.connect();
    await c.query(`DROP ROLE IF EXISTS "${role}"`).catch(() => {});
    await c.end();
  });

  const call = (path: string, auth: string, body: object = {}) =>
    request(t.app).post(`/statistics/v1/storage/${path}`).set('Authorization', auth).send(body);
  const pluginInfo = (over: Record<string, unknown> = {}) => ({
    plugin_id: PLUGIN_ID,
    version: '1.1.0',
    options: { host: '127.0.0.1', port: 5432, database: t.db.name },
    secret_data: { username: 'postgres', password: 'hunter2-not-stored' },
    schema: 'postgresql_password',
    ...over,
  });
  const register = async (name: string, over: Record<string, unknown> = {}, auth = admin, domain = 'd1') => {
    const res = await call('register', auth, { name, user_id: 'admin', domain_id: domain, plugin_info: pluginInfo(), ...over });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('registers a storage with every field of StorageInfo and keeps the secret only sealed', async () => {
    const s = await register('primary', { tags: { env: 'prod' } });
    expect(s).toEqual({
      storage_id: expect.stringMatching(/^storage-[0-9a-f]{12}$/),
      name: 'primary',
      state: 'ENABLED',
      options: { host: '127.0.0.1', port: 5432, database: t.db.name, schema: 'public', ssl: false },
      capability: { supported_schema: ['postgresql_password'], storage_type: 'POSTGRESQL' },
      plugin_info: {
        plugin_id: PLUGIN_ID,
        version: '1.1.0',
        options: { host: '127.0.0.1', port: 5432, database: t.db.name },
        secret_id: expect.stringMatching(/^secret-[0-9a-f]{12}$/),
        metadata: { required_keys: ['secret_data.username'], probe: 'connect, schema create privilege' },
      },
      tags: { env: 'prod' },
      user_id: 'admin',
      domain_id: 'd1',
      created_at: expect.stringMatching(TS),
    });
    expect(JSON.stringify(s)).not.toContain('hunter2');
    const { rows } = await t.db.pool.query('SELECT * FROM secret WHERE secret_id = $1', [s.plugin_info.secret_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ domain_id: 'd1', storage_id: s.storage_id, schema: 'postgresql_password' });
    expect(JSON.stringify(rows[0])).not.toContain('hunter2');
    expect(JSON.stringify(rows[0])).not.toContain('postgres"');
    expect(t.deps.secrets.open(rows[0], `d1:${s.plugin_info.secret_id}`)).toEqual({ username: 'postgres', password: 'hunter2-not-stored' });
    const stored = await t.db.pool.query('SELECT * FROM storage WHERE storage_id = $1', [s.storage_id]);
    expect(JSON.stringify(stored.rows[0])).not.toContain('hunter2');
    // get, list and stat never show secret_data either.
    expect(JSON.stringify((await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1' })).body)).not.toContain('hunter2');
  });

  it('registers a storage without a plugin (plugin_info is optional), which cannot be verified', async () => {
    const s = await register('bare', { plugin_info: undefined });
    expect(s.plugin_info).toEqual({ plugin_id: '', version: '', options: {}, secret_id: '', metadata: {} });
    expect(s.options).toEqual({});
    for (const op of ['verify-plugin', 'update-plugin']) {
      const res = await call(op, admin, { storage_id: s.storage_id, domain_id: 'd1' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('ERROR_STORAGE_HAS_NO_PLUGIN');
    }
  });

  it.each([
    [{}, 400, 'ERROR_REQUIRED_PARAMETER', 'domain_id'],
    [{ domain_id: 'd1', user_id: 'admin' }, 400, 'ERROR_REQUIRED_PARAMETER', 'name'],
    [{ name: 'x', domain_id: 'd1' }, 400, 'ERROR_REQUIRED_PARAMETER', 'user_id'],
    [{ name: 'x', user_id: 'admin' }, 400, 'ERROR_REQUIRED_PARAMETER', 'domain_id'],
    [{ name: '', user_id: 'admin', domain_id: 'd1' }, 400, 'ERROR_REQUIRED_PARAMETER', 'name'],
    [{ name: 'x', user_id: 'admin', domain_id: 'd1', tags: 'no' }, 400, 'ERROR_INVALID_PARAMETER', 'tags'],
    [{ name: 'x', user_id: 'admin', domain_id: 'd1', secret_data: {} }, 400, 'ERROR_INVALID_PARAMETER', 'secret_data'],
    [{ name: 'x', user_id: 'admin', domain_id: 'd2' }, 403, 'ERROR_PERMISSION_DENIED', 'domain_id'],
    [{ name: 'x', user_id: 'someone-else', domain_id: 'd1' }, 403, 'ERROR_PERMISSION_DENIED', 'user_id'],
  ])('validates register %#', async (body, status, code, key) => {
    const res = await call('register', admin, body);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(key);
  });

  it.each([undefined, ''])('takes plugin_info.schema %j as the plugin\'s first supported schema (proto3: "" is not set)', async (schema) => {
    const res = await call('register', admin, { name: `schema-${schema ?? 'absent'}`, user_id: 'admin', domain_id: 'd1', plugin_info: pluginInfo({ schema }) });
    expect(res.status).toBe(200);
    const secret = await t.db.pool.query('SELECT schema FROM secret WHERE storage_id = $1', [res.body.storage_id]);
    expect(secret.rows).toEqual([{ schema: 'postgresql_password' }]);
  });

  it.each([
    [{ plugin_id: 'plugin-nope' }, 404, 'ERROR_NOT_FOUND', 'plugin_info.plugin_id'],
    [{ version: '9.9.9' }, 400, 'ERROR_INVALID_PLUGIN_VERSION', 'plugin_info.version'],
    [{ version: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.version'],
    [{ schema: 'aws_access_key' }, 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.schema'],
    [{ secret_data: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.secret_data'],
    [{ secret_data: {} }, 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.secret_data.username'],
    [{ secret_data: { username: 'u', token: 'x' } }, 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.secret_data.token'],
    [{ options: { database: 'x' } }, 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.options.host'],
    [{ options: { host: 'h', database: 'x', port: 'five' } }, 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.port'],
    [{ options: { host: 'h; drop', database: 'x' } }, 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.host'],
    [{ extra: 1 }, 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.extra'],
  ])('validates plugin_info against the plugin %#', async (over, status, code, key) => {
    const res = await call('register', admin, { name: 'x', user_id: 'admin', domain_id: 'd1', plugin_info: pluginInfo(over) });
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(code === 'ERROR_NOT_FOUND' ? `${key} = plugin-nope` : `key = ${key}`);
    expect(res.body.error.message).not.toContain('hunter2');
  });

  it('needs a token, and DOMAIN_ADMIN for every operation', async () => {
    const s = await register('guarded');
    const none = await request(t.app).post('/statistics/v1/storage/list').send({ domain_id: 'd1' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    const bodies: Record<string, object> = {
      register: { name: 'x', user_id: 'owner', domain_id: 'd1' },
      update: { storage_id: s.storage_id, domain_id: 'd1' },
      'update-plugin': { storage_id: s.storage_id, domain_id: 'd1' },
      'verify-plugin': { storage_id: s.storage_id, domain_id: 'd1' },
      enable: { storage_id: s.storage_id, domain_id: 'd1' },
      disable: { storage_id: s.storage_id, domain_id: 'd1' },
      deregister: { storage_id: s.storage_id, domain_id: 'd1' },
      get: { storage_id: s.storage_id, domain_id: 'd1' },
      list: { domain_id: 'd1' },
      stat: { domain_id: 'd1', query: { aggregate: [{ count: { name: 'n' } }] } },
    };
    for (const [op, body] of Object.entries(bodies)) {
      for (const auth of [owner, member]) {
        const res = await call(op, auth, body);
        expect([op, res.status]).toEqual([op, 403]);
      }
    }
    const readOnly = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', permissions: ['statistics:Storage.read'] });
    expect((await call('get', readOnly, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(200);
    expect((await call('disable', readOnly, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(403);
    expect((await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1' })).body.state).toBe('ENABLED');
  });

  it('updates name and tags', async () => {
    const s = await register('before');
    const res = await call('update', admin, { storage_id: s.storage_id, domain_id: 'd1', name: 'after', tags: { a: '1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'after', tags: { a: '1' }, plugin_info: s.plugin_info });
    const missing = await call('update', admin, { storage_id: 'storage-missing', domain_id: 'd1', name: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('ERROR_NOT_FOUND');
    expect((await call('update', admin, { storage_id: s.storage_id, domain_id: 'd1', name: 7 })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await call('update', admin, { domain_id: 'd1' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  it('update-plugin changes version and options, refreshes metadata and replaces the secret', async () => {
    const s = await register('plug');
    const v = await call('update-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1', version: '1.0.0' });
    expect(v.status).toBe(200);
    expect(v.body.plugin_info).toMatchObject({ version: '1.0.0', metadata: { probe: 'connect' }, secret_id: s.plugin_info.secret_id });

    const o = await call('update-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1', options: { host: 'db.internal', database: 'stats', port: 6543 } });
    expect(o.status).toBe(200);
    expect(o.body.options).toEqual({ host: 'db.internal', port: 6543, database: 'stats', schema: 'public', ssl: false });
    expect(o.body.plugin_info.options).toEqual({ host: 'db.internal', database: 'stats', port: 6543 });

    const sec = await call('update-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1', secret_data: { username: 'other', password: 'p2' } });
    expect(sec.status).toBe(200);
    const newId = sec.body.plugin_info.secret_id;
    expect(newId).not.toBe(s.plugin_info.secret_id);
    const { rows } = await t.db.pool.query('SELECT secret_id FROM secret WHERE storage_id = $1', [s.storage_id]);
    expect(rows.map((r) => r.secret_id)).toEqual([newId]);

    const bad = [
      [{ version: '0.1' }, 'ERROR_INVALID_PLUGIN_VERSION', 'version'],
      [{ options: { host: 'h' } }, 'ERROR_REQUIRED_PARAMETER', 'options.database'],
      [{ secret_data: { password: 'x' } }, 'ERROR_REQUIRED_PARAMETER', 'secret_data.username'],
      [{ options: 'x' }, 'ERROR_INVALID_PARAMETER', 'options'],
    ] as const;
    for (const [body, code, key] of bad) {
      const res = await call('update-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1', ...body });
      expect([res.status, res.body.error.code]).toEqual([400, code]);
      expect(res.body.error.message).toContain(`key = ${key}`);
    }
    expect((await call('update-plugin', admin, { storage_id: 'storage-nope', domain_id: 'd1' })).status).toBe(404);
  });

  describe('verify-plugin against the real PostgreSQL', () => {
    it('connects to the database with the sealed credentials and runs the probe', async () => {
      for (const version of ['1.0.0', '1.1.0']) {
        const s = await register(`ok-${version}`, { plugin_info: pluginInfo({ version, secret_data: { username: 'postgres' } }) });
        const res = await call('verify-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1' });
        expect([version, res.status, res.body]).toEqual([version, 200, {}]);
      }
    });

    it('every failure is the one uniform refusal: a missing database, a closed port, a missing schema or privilege, a refused address', async () => {
      const cases = [
        { options: { host: '127.0.0.1', database: 'no_such_database_xyz' } },
        { options: { host: '127.0.0.1', port: 1, database: 'postgres' } },
        { options: { host: '127.0.0.1', database: 'postgres', schema: 'nope_schema' } },
        { secret_data: { username: role } },
        { options: { host: '169.254.169.254', database: 'postgres' } },
        { options: { host: '0xa9fea9fe', database: 'postgres' } },
      ];
      const answers = new Set<string>();
      for (const over of cases) {
        const s = await register('failing', { plugin_info: pluginInfo(over) });
        const res = await call('verify-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1' });
        expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_OUTBOUND_REFUSED']);
        expect(res.text).not.toMatch(/no_such_database|ECONN|nope_schema|may not|does not exist|169\.254|password|role/);
        answers.add(JSON.stringify(res.body));
      }
      expect(answers.size).toBe(1);
    });

    it('1.0.0 only connects: the user without CREATE passes there', async () => {
      const s = await register('connect-only', { plugin_info: pluginInfo({ version: '1.0.0', secret_data: { username: role } }) });
      expect((await call('verify-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(200);
    });

    it('refuses loopback and private targets the allow-list does not name (SSRF)', async () => {
      const strict = await createTestStatistics({ outbound: NO_PRIVATE_DESTINATIONS });
      try {
        for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '[::1]', '::ffff:127.0.0.1']) {
          const reg = await request(strict.app)
            .post('/statistics/v1/storage/register')
            .set('Authorization', admin)
            .send({ name: 'x', user_id: 'admin', domain_id: 'd1', plugin_info: pluginInfo({ options: { host, database: 'postgres' } }) });
          expect(reg.status).toBe(200);
          const res = await request(strict.app)
            .post('/statistics/v1/storage/verify-plugin')
            .set('Authorization', admin)
            .send({ storage_id: reg.body.storage_id, domain_id: 'd1' });
          expect([host, res.status, res.body.error?.code]).toEqual([host, 400, 'ERROR_OUTBOUND_REFUSED']);
        }
      } finally {
        await strict.close();
      }
    });

    it('refuses a disabled storage until it is enabled again', async () => {
      const s = await register('toggle');
      const off = await call('disable', admin, { storage_id: s.storage_id, domain_id: 'd1' });
      expect(off.body.state).toBe('DISABLED');
      const refused = await call('verify-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1' });
      expect([refused.status, refused.body.error.code]).toEqual([400, 'ERROR_STORAGE_STATE_DISABLED']);
      expect((await call('disable', admin, { storage_id: s.storage_id, domain_id: 'd1' })).body.state).toBe('DISABLED');
      const on = await call('enable', admin, { storage_id: s.storage_id, domain_id: 'd1' });
      expect(on.body).toMatchObject({ state: 'ENABLED', storage_id: s.storage_id });
      expect((await call('verify-plugin', admin, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(200);
      expect((await call('enable', admin, { storage_id: 'storage-nope', domain_id: 'd1' })).status).toBe(404);
      expect((await call('disable', admin, { storage_id: 'storage-nope', domain_id: 'd1' })).status).toBe(404);
      expect((await call('verify-plugin', admin, { storage_id: 'storage-nope', domain_id: 'd1' })).status).toBe(404);
    });
  });

  it('deregisters a storage and its secret', async () => {
    const s = await register('gone');
    const res = await call('deregister', admin, { storage_id: s.storage_id, domain_id: 'd1' });
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(404);
    const { rows } = await t.db.pool.query('SELECT 1 FROM secret WHERE storage_id = $1', [s.storage_id]);
    expect(rows).toHaveLength(0);
    expect((await call('deregister', admin, { storage_id: s.storage_id, domain_id: 'd1' })).status).toBe(404);
  });

  it('get answers only the fields asked for', async () => {
    const s = await register('only-me', { tags: { team: 'a', cost: 'b' } });
    const res = await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1', only: ['name', 'plugin_info.plugin_id', 'tags.team'] });
    expect(res.body).toEqual({ name: 'only-me', plugin_info: { plugin_id: PLUGIN_ID }, tags: { team: 'a' } });
    expect((await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1', only: [] })).body).toEqual(
      (await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1' })).body,
    );
    const bad = await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1', only: ['name', 'secret_data'] });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(bad.body.error.message).toContain('only[1]');
    expect((await call('get', admin, { storage_id: s.storage_id, domain_id: 'd1', only: 'name' })).status).toBe(400);
    expect((await call('get', admin, { domain_id: 'd1' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  describe('list and stat', () => {
    let ids: string[];
    beforeAll(async () => {
      const a = await register('alpha-list', { tags: { tier: 'gold' } });
      const b = await register('beta-list', { tags: { tier: 'silver' } });
      await call('disable', admin, { storage_id: b.storage_id, domain_id: 'd1' });
      ids = [a.storage_id, b.storage_id];
      await register('foreign', {}, otherAdmin, 'd2');
    });

    it('lists the domain with the request filters and the query DSL', async () => {
      const all = await call('list', admin, { domain_id: 'd1' });
      expect(all.status).toBe(200);
      expect(all.body.total_count).toBe(all.body.results.length);
      expect(all.body.results.every((r: { domain_id: string }) => r.domain_id === 'd1')).toBe(true);
      expect(JSON.stringify(all.body)).not.toContain('hunter2');

      const disabled = await call('list', admin, { domain_id: 'd1', state: 'DISABLED' });
      expect(disabled.body.results.map((r: { storage_id: string }) => r.storage_id)).toContain(ids[1]);
      expect(disabled.body.results.every((r: { state: string }) => r.state === 'DISABLED')).toBe(true);
      expect((await call('list', admin, { domain_id: 'd1', name: 'alpha-list' })).body.results.map((r: { storage_id: string }) => r.storage_id)).toEqual([ids[0]]);
      expect((await call('list', admin, { domain_id: 'd1', storage_id: ids[1] })).body.total_count).toBe(1);
      expect((await call('list', admin, { domain_id: 'd1', user_id: 'nobody' })).body).toEqual({ results: [], total_count: 0 });

      const q = await call('list', admin, {
        domain_id: 'd1',
        query: { filter: [{ key: 'tags.tier', value: 'gold', operator: 'eq' }], only: ['storage_id', 'name'] },
      });
      expect(q.body).toEqual({ results: [{ storage_id: ids[0], name: 'alpha-list' }], total_count: 1 });
      const kw = await call('list', admin, { domain_id: 'd1', query: { keyword: 'beta-li' } });
      expect(kw.body.results.map((r: { storage_id: string }) => r.storage_id)).toEqual([ids[1]]);
      const page = await call('list', admin, { domain_id: 'd1', query: { sort: [{ key: 'name' }], page: { start: 1, limit: 1 } } });
      expect(page.body.results).toHaveLength(1);
      expect(page.body.total_count).toBe(all.body.total_count);
      const byPlugin = await call('list', admin, { domain_id: 'd1', query: { filter: [{ k: 'plugin_info.plugin_id', v: PLUGIN_ID, o: 'eq' }] } });
      expect(byPlugin.body.total_count).toBeGreaterThanOrEqual(2);
    });

    it('refuses bad list requests', async () => {
      expect((await call('list', admin, { domain_id: 'd1', state: 'x'.repeat(33) })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
      const badKey = await call('list', admin, { domain_id: 'd1', query: { filter: [{ key: 'nope', value: 1, operator: 'eq' }] } });
      expect(badKey.status).toBe(400);
      expect(badKey.body.error.message).toContain('query.filter[0]');
      expect((await call('list', admin, { domain_id: 'd1', query: { filter: [{ key: 'name', value: 1, operator: 'bogus' }] } })).status).toBe(400);
      expect((await call('list', admin, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    });

    it('stats the domain only', async () => {
      const res = await call('stat', admin, {
        domain_id: 'd1',
        query: { aggregate: [{ group: { keys: [{ key: 'state', name: 'state' }], fields: [{ name: 'n', operator: 'count' }] } }, { sort: [{ key: 'state' }] }] },
      });
      expect(res.status).toBe(200);
      const byState = Object.fromEntries(res.body.results.map((r: { state: string; n: number }) => [r.state, r.n]));
      expect(byState.DISABLED).toBeGreaterThanOrEqual(1);
      const total = (await call('list', admin, { domain_id: 'd1', query: { count_only: true } })).body.total_count;
      expect(Object.values(byState).reduce((a: number, b) => a + (b as number), 0)).toBe(total);
      const other = await call('stat', otherAdmin, { domain_id: 'd2', query: { aggregate: [{ count: { name: 'n' } }] } });
      expect(other.body).toEqual({ results: [{ n: 1 }] });
      const distinct = await call('stat', admin, { domain_id: 'd1', query: { distinct: 'state' } });
      expect(distinct.body.results).toEqual(['DISABLED', 'ENABLED']);
      expect((await call('stat', admin, { domain_id: 'd1' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      expect((await call('stat', admin, { domain_id: 'd1', query: {} })).status).toBe(400);
    });

    it('shows another domain nothing, and a body domain_id cannot widen access', async () => {
      const list = await call('list', otherAdmin, { domain_id: 'd2' });
      expect(list.body.results.map((r: { name: string }) => r.name)).toEqual(['foreign']);
      for (const op of ['get', 'update', 'update-plugin', 'verify-plugin', 'enable', 'disable', 'deregister']) {
        const res = await call(op, otherAdmin, { storage_id: ids[0], domain_id: 'd2' });
        expect([op, res.status, res.body.error.code]).toEqual([op, 404, 'ERROR_NOT_FOUND']);
        const widen = await call(op, otherAdmin, { storage_id: ids[0], domain_id: 'd1' });
        expect([op, widen.status, widen.body.error.code]).toEqual([op, 403, 'ERROR_PERMISSION_DENIED']);
      }
      expect((await call('list', otherAdmin, { domain_id: 'd1' })).status).toBe(403);
      expect((await call('stat', otherAdmin, { domain_id: 'd1', query: { distinct: 'name' } })).status).toBe(403);
      expect((await call('get', admin, { storage_id: ids[0], domain_id: 'd1' })).body.state).toBe('ENABLED');
    });
  });
});
