import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestRepository } from '../test-support';

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const PERSON = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name'] };

describe('repository schema', () => {
  let t: Awaited<ReturnType<typeof createTestRepository>>;
  let admin: string;
  let otherAdmin: string;
  let owner: string;
  let member: string;
  let user: string;

  beforeAll(async () => {
    t = await createTestRepository({ sweepSeconds: 0 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    user = await bearer({ domainId: 'd1', roleType: 'USER', userId: 'someone' });
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object = {}) =>
    request(t.app).post(`/repository/v2/schema/${path}`).set('Authorization', auth).send(body);
  const create = async (schema_id: string, over: Record<string, unknown> = {}, auth = admin, domain = 'd1') => {
    const res = await call('create', auth, { schema_id, name: `${schema_id} name`, schema: PERSON, domain_id: domain, ...over });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('creates a schema with every field of SchemaInfo', async () => {
    const s = await create('person', { labels: ['people', 'hr'], tags: { owner: 'hr' } });
    expect(s).toEqual({
      schema_id: 'person',
      name: 'person name',
      sync_mode: 'NONE',
      sync_options: {},
      schema: PERSON,
      labels: ['people', 'hr'],
      tags: { owner: 'hr' },
      remote_repository: {},
      domain_id: 'd1',
      created_at: expect.stringMatching(TS),
    });
    const dup = await call('create', admin, { schema_id: 'person', name: 'again', schema: {}, domain_id: 'd1' });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'ERROR_ALREADY_EXISTS']);
    // The same id in another domain is another schema.
    expect((await create('person', {}, otherAdmin, 'd2')).domain_id).toBe('d2');
  });

  it('records where a synced schema comes from', async () => {
    const gh = await create('gh', { sync_mode: 'MANUAL', sync_options: { github: { url: 'https://github.com/acme/schemas/blob/main/aws/key.json' } } });
    expect(gh.sync_options).toEqual({ github: { url: 'https://github.com/acme/schemas/blob/main/aws/key.json' } });
    expect(gh.remote_repository).toEqual({
      repository_type: 'GITHUB',
      name: 'acme/schemas',
      url: 'https://github.com/acme/schemas/blob/main/aws/key.json',
      source_url: 'https://raw.githubusercontent.com/acme/schemas/main/aws/key.json',
      synced_at: '',
      digest: '',
      last_error: '',
    });
    const gl = await create('gl', { sync_mode: 'AUTOMATIC', sync_options: { gitlab: { url: 'https://gitlab.example.com/grp/sub/proj/-/blob/v1/s.json' } } });
    expect(gl.remote_repository).toMatchObject({ repository_type: 'GITLAB', name: 'grp/sub/proj', source_url: 'https://gitlab.example.com/grp/sub/proj/-/raw/v1/s.json' });
    const git = await create('git', { sync_mode: 'MANUAL', sync_options: { git: { url: 'https://git.example.com/team/repo/raw/branch/main/s.json' } } });
    expect(git.remote_repository).toMatchObject({ repository_type: 'GIT', name: 'git.example.com/team/repo/raw/branch/main', source_url: 'https://git.example.com/team/repo/raw/branch/main/s.json' });
    const ghe = await create('ghe', { sync_options: { github: { url: 'https://ghe.corp.example/acme/s/blob/main/x.json' } } });
    expect(ghe).toMatchObject({ sync_mode: 'NONE', remote_repository: { source_url: 'https://ghe.corp.example/acme/s/raw/main/x.json' } });
  });

  it.each([
    [{}, 'ERROR_REQUIRED_PARAMETER', 'domain_id'],
    [{ domain_id: 'd1', name: 'n', schema: {} }, 'ERROR_REQUIRED_PARAMETER', 'schema_id'],
    [{ domain_id: 'd1', schema_id: 'x', schema: {} }, 'ERROR_REQUIRED_PARAMETER', 'name'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n' }, 'ERROR_REQUIRED_PARAMETER', 'schema'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: [] }, 'ERROR_INVALID_PARAMETER', 'schema'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_mode: 'SOMETIMES' }, 'ERROR_INVALID_PARAMETER', 'sync_mode'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_mode: 'MANUAL' }, 'ERROR_REQUIRED_PARAMETER', 'sync_options'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_mode: 'AUTOMATIC', sync_options: {} }, 'ERROR_REQUIRED_PARAMETER', 'sync_options'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { svn: { url: 'https://x.example/a' } } }, 'ERROR_INVALID_PARAMETER', 'sync_options.svn'],
    [
      { domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { git: { url: 'https://a.example/x.json' }, github: { url: 'https://github.com/a/b/blob/m/x.json' } } },
      'ERROR_INVALID_PARAMETER',
      'sync_options',
    ],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { git: { url: 'ftp://a.example/x.json' } } }, 'ERROR_INVALID_PARAMETER', 'sync_options.git.url'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { git: { url: 'https://u:p@a.example/x.json' } } }, 'ERROR_INVALID_PARAMETER', 'sync_options.git.url'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { github: { url: 'https://github.com/acme' } } }, 'ERROR_INVALID_PARAMETER', 'sync_options.github.url'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, sync_options: { gitlab: { url: 'https://gitlab.com/a/b/c.json' } } }, 'ERROR_INVALID_PARAMETER', 'sync_options.gitlab.url'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, labels: 'a' }, 'ERROR_INVALID_PARAMETER', 'labels'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, tags: [] }, 'ERROR_INVALID_PARAMETER', 'tags'],
    [{ domain_id: 'd1', schema_id: 'x', name: 'n', schema: {}, remote_repository: {} }, 'ERROR_INVALID_PARAMETER', 'remote_repository'],
  ])('validates create %#', async (body, code, key) => {
    const res = await call('create', admin, body);
    expect([res.status, res.body.error.code]).toEqual([400, code]);
    expect(res.body.error.message).toContain(`key = ${key}`);
  });

  it.each([
    [{ type: 'strin' }, 'schema/type'],
    [{ properties: 5 }, 'schema/properties'],
    [{ required: 'name' }, 'schema/required'],
    [{ type: 'object', properties: { a: { minimum: 'zero' } } }, 'minimum'],
    [{ $ref: '#/definitions/missing' }, 'missing'],
    [{ $ref: 'https://example.com/remote.json' }, 'remote.json'],
    [{ $schema: 'https://example.com/my-dialect' }, 'schema.$schema'],
    [{ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', prefixItems: 3 }, 'prefixItems'],
  ])('refuses a schema that is not a valid JSON Schema %#', async (schema, reason) => {
    const res = await call('create', admin, { schema_id: 'bad', name: 'bad', schema, domain_id: 'd1' });
    expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_INVALID_SCHEMA']);
    expect(res.body.error.message).toContain(reason);
  });

  it.each([
    {},
    { type: 'object', definitions: { a: { type: 'string' } }, properties: { x: { $ref: '#/definitions/a' } } },
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string', format: 'email' },
    { $schema: 'http://json-schema.org/draft-06/schema#', type: 'number', exclusiveMinimum: 0 },
    { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', dependentRequired: { a: ['b'] } },
    { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] },
    { type: 'object', 'x-ui': { widget: 'password' } },
  ])('accepts valid JSON Schemas of the supported dialects %#', async (schema) => {
    const res = await call('create', admin, { schema_id: `ok-${Math.random().toString(16).slice(2)}`, name: 'ok', schema, domain_id: 'd1' });
    expect(res.status).toBe(200);
    expect(res.body.schema).toEqual(schema);
  });

  it('checks schemas sharing an $id independently (nothing is kept between checks)', async () => {
    const s = { $id: 'https://schemas.example/key', type: 'object', properties: { k: { $ref: '#/definitions/k' } }, definitions: { k: { type: 'string' } } };
    await create('same-id-1', { schema: s });
    await create('same-id-2', { schema: { ...s, required: ['k'] } });
    const bad = await call('create', admin, { schema_id: 'same-id-3', name: 'n', schema: { ...s, definitions: {} }, domain_id: 'd1' });
    expect(bad.body.error.code).toBe('ERROR_INVALID_SCHEMA');
  });

  it('updates, requiring schema (R in the spec) and re-checking sync settings', async () => {
    await create('upd', { labels: ['a'] });
    const res = await call('update', admin, { schema_id: 'upd', domain_id: 'd1', schema: { type: 'string' }, name: 'renamed', labels: ['b'], tags: { t: '1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ schema_id: 'upd', name: 'renamed', schema: { type: 'string' }, labels: ['b'], tags: { t: '1' }, sync_mode: 'NONE' });
    expect((await call('update', admin, { schema_id: 'upd', domain_id: 'd1', name: 'x' })).body.error.message).toContain('key = schema');
    expect((await call('update', admin, { schema_id: 'upd', domain_id: 'd1', schema: { type: 7 } })).body.error.code).toBe('ERROR_INVALID_SCHEMA');
    const noSource = await call('update', admin, { schema_id: 'upd', domain_id: 'd1', schema: {}, sync_mode: 'AUTOMATIC' });
    expect([noSource.status, noSource.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
    const withSource = await call('update', admin, {
      schema_id: 'upd',
      domain_id: 'd1',
      schema: {},
      sync_mode: 'MANUAL',
      sync_options: { github: { url: 'https://github.com/o/r/blob/main/upd.json' } },
    });
    expect(withSource.body).toMatchObject({ sync_mode: 'MANUAL', remote_repository: { name: 'o/r' }, name: 'renamed' });
    // Clearing the source while a sync mode needs it is refused; with NONE it is allowed.
    expect((await call('update', admin, { schema_id: 'upd', domain_id: 'd1', schema: {}, sync_options: {} })).status).toBe(400);
    const cleared = await call('update', admin, { schema_id: 'upd', domain_id: 'd1', schema: {}, sync_mode: 'NONE', sync_options: {} });
    expect(cleared.body).toMatchObject({ sync_mode: 'NONE', sync_options: {}, remote_repository: {} });
    const missing = await call('update', admin, { schema_id: 'nope', domain_id: 'd1', schema: {} });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'ERROR_NOT_FOUND']);
  });

  it('refuses to sync a NONE schema and an unknown one', async () => {
    await create('local-only');
    const res = await call('sync', admin, { schema_id: 'local-only', domain_id: 'd1' });
    expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_SYNC_MODE_NONE']);
    expect((await call('sync', admin, { schema_id: 'nope', domain_id: 'd1' })).status).toBe(404);
    expect((await call('sync', admin, { domain_id: 'd1' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  it('deletes', async () => {
    await create('del');
    expect((await call('delete', admin, { schema_id: 'del', domain_id: 'd1' })).body).toEqual({});
    expect((await call('get', admin, { schema_id: 'del', domain_id: 'd1' })).status).toBe(404);
    expect((await call('delete', admin, { schema_id: 'del', domain_id: 'd1' })).status).toBe(404);
  });

  it('get answers only the fields asked for', async () => {
    await create('proj', { tags: { a: '1', b: '2' } });
    const res = await call('get', member, { schema_id: 'proj', domain_id: 'd1', only: ['name', 'schema.required', 'tags.b'] });
    expect(res.body).toEqual({ name: 'proj name', schema: { required: ['name'] }, tags: { b: '2' } });
    expect((await call('get', member, { schema_id: 'proj', domain_id: 'd1' })).body.schema).toEqual(PERSON);
    const bad = await call('get', member, { schema_id: 'proj', domain_id: 'd1', only: ['nonsense'] });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
  });

  it('lets DOMAIN_ADMIN write and every role of the domain read', async () => {
    await create('roles');
    for (const auth of [owner, member, user]) {
      expect((await call('create', auth, { schema_id: 'r2', name: 'n', schema: {}, domain_id: 'd1' })).status).toBe(403);
      expect((await call('update', auth, { schema_id: 'roles', schema: {}, domain_id: 'd1' })).status).toBe(403);
      expect((await call('sync', auth, { schema_id: 'roles', domain_id: 'd1' })).status).toBe(403);
      expect((await call('delete', auth, { schema_id: 'roles', domain_id: 'd1' })).status).toBe(403);
      expect((await call('get', auth, { schema_id: 'roles', domain_id: 'd1' })).status).toBe(200);
      expect((await call('list', auth, { domain_id: 'd1' })).status).toBe(200);
      expect((await call('stat', auth, { domain_id: 'd1', query: { distinct: 'schema_id' } })).status).toBe(200);
    }
    expect((await request(t.app).post('/repository/v2/schema/get').send({ schema_id: 'roles', domain_id: 'd1' })).status).toBe(401);
  });

  describe('list and stat', () => {
    beforeAll(async () => {
      await create('list-a', { labels: ['finance', 'aws'], sync_mode: 'MANUAL', sync_options: { github: { url: 'https://github.com/fin/schemas/blob/main/a.json' } } });
      await create('list-b', { labels: ['finance'], tags: { tier: 'gold' } });
      await create('foreign-list', { labels: ['finance'] }, otherAdmin, 'd2');
    });

    it('lists with request filters, keyword and the query DSL, in the domain only', async () => {
      const all = await call('list', admin, { domain_id: 'd1' });
      expect(all.body.results.every((r: { domain_id: string }) => r.domain_id === 'd1')).toBe(true);
      expect(all.body.total_count).toBe(all.body.results.length);
      const ids = (b: { results: { schema_id: string }[] }) => b.results.map((r) => r.schema_id).sort();
      expect(ids((await call('list', admin, { domain_id: 'd1', schema_id: 'list-a' })).body)).toEqual(['list-a']);
      expect(ids((await call('list', admin, { domain_id: 'd1', name: 'list-b name' })).body)).toEqual(['list-b']);
      expect((await call('list', admin, { domain_id: 'd1', sync_mode: 'MANUAL' })).body.results.every((r: { sync_mode: string }) => r.sync_mode === 'MANUAL')).toBe(true);
      expect(ids((await call('list', admin, { domain_id: 'd1', remote_repository_name: 'fin/schemas' })).body)).toEqual(['list-a']);
      expect(ids((await call('list', admin, { domain_id: 'd1', query: { keyword: 'financ' } })).body)).toEqual(['list-a', 'list-b']);
      expect(ids((await call('list', admin, { domain_id: 'd1', query: { filter: [{ k: 'tags.tier', v: 'gold', o: 'eq' }] } })).body)).toEqual(['list-b']);
      const only = await call('list', admin, { domain_id: 'd1', schema_id: 'list-b', query: { only: ['schema_id', 'labels'] } });
      expect(only.body).toEqual({ results: [{ schema_id: 'list-b', labels: ['finance'] }], total_count: 1 });
      const page = await call('list', admin, { domain_id: 'd1', query: { sort: [{ key: 'schema_id', desc: true }], page: { start: 2, limit: 2 } } });
      expect(page.body.results).toHaveLength(2);
      expect(page.body.total_count).toBe(all.body.total_count);
      expect((await call('list', admin, { domain_id: 'd1', sync_mode: 'X' })).status).toBe(400);
      expect((await call('list', admin, { domain_id: 'd1', query: { filter: [{ key: 'secret', value: 1, operator: 'eq' }] } })).status).toBe(400);
    });

    it('stats in the domain only', async () => {
      const res = await call('stat', admin, {
        domain_id: 'd1',
        query: { aggregate: [{ group: { keys: [{ key: 'sync_mode', name: 'mode' }], fields: [{ name: 'n', operator: 'count' }] } }, { sort: [{ key: 'mode' }] }] },
      });
      expect(res.status).toBe(200);
      const total = (await call('list', admin, { domain_id: 'd1', query: { count_only: true } })).body.total_count;
      expect(res.body.results.reduce((a: number, r: { n: number }) => a + r.n, 0)).toBe(total);
      const other = await call('stat', otherAdmin, { domain_id: 'd2', query: { distinct: 'schema_id' } });
      expect(other.body.results).toEqual(['foreign-list', 'person']);
      expect((await call('stat', admin, { domain_id: 'd1' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    });

    it('shows another domain nothing, and a body domain_id cannot widen access', async () => {
      for (const [op, body] of [
        ['get', { schema_id: 'list-a' }],
        ['update', { schema_id: 'list-a', schema: {} }],
        ['sync', { schema_id: 'list-a' }],
        ['delete', { schema_id: 'list-a' }],
      ] as const) {
        const res = await call(op, otherAdmin, { ...body, domain_id: 'd2' });
        expect([op, res.status, res.body.error.code]).toEqual([op, 404, 'ERROR_NOT_FOUND']);
        const widen = await call(op, otherAdmin, { ...body, domain_id: 'd1' });
        expect([op, widen.status, widen.body.error.code]).toEqual([op, 403, 'ERROR_PERMISSION_DENIED']);
      }
      expect((await call('list', otherAdmin, { domain_id: 'd1' })).status).toBe(403);
      expect((await call('list', member, { domain_id: 'd2' })).status).toBe(403);
      const theirs = await call('list', otherAdmin, { domain_id: 'd2', query: { keyword: 'list' } });
      expect(theirs.body.results.map((r: { schema_id: string }) => r.schema_id)).toEqual(['foreign-list']);
      expect((await call('get', admin, { schema_id: 'list-a', domain_id: 'd1' })).status).toBe(200);
    });
  });
});
