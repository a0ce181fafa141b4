import request from 'supertest';
import { bearer, sendPartialRequest, membershipDirectory } from '@platform/testing';
import { createTestOpsflow } from '../test-support';

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const INGEST = 'ingest-token-for-tests';

describe('opsflow event', () => {
  let t: Awaited<ReturnType<typeof createTestOpsflow>>;
  let admin: string;
  let owner1: string;
  let member1: string;
  let owner2: string;
  let otherAdmin: string;

  beforeAll(async () => {
    t = await createTestOpsflow({ ingestTokens: ['old-token', INGEST] });
    await t.directory.publish('d1', {
      projects: [
        // The member belongs to p-1 (members see only their projects: see the members block below).
        { project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'one', users: ['member'] },
        { project_id: 'p-2', workspace_id: 'ws-2', project_group_id: '', name: 'two' },
      ],
      groups: [],
    });
    await t.directory.publish('d2', { projects: [{ project_id: 'p-x', workspace_id: 'ws-x', project_group_id: '', name: 'x' }], groups: [] });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner1 = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member1 = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    owner2 = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner2' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(() => t.close());

  const ingest = (body: object, token = INGEST) =>
    request(t.app).post('/opsflow/v1/event/create').set('Authorization', `Bearer ${token}`).send(body);
  const action = (over: Record<string, unknown> = {}) => ({
    event_key: `k-${Math.random().toString(16).slice(2)}`,
    domain_id: 'd1',
    project_id: 'p-1',
    task_id: 'task-1',
    event_type: 'CREATED',
    name: 'Task created',
    description: 'created by the portal',
    user_id: 'member',
    ...over,
  });
  const call = (path: string, auth: string, body: object = {}) =>
    request(t.app).post(`/opsflow/v1/event/${path}`).set('Authorization', auth).send(body);

  describe('ingestion', () => {
    it('records an action with its task, user and scope fields', async () => {
      const res = await ingest(action());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        event_id: expect.stringMatching(/^event-[0-9a-f]{12}$/),
        event_type: 'CREATED',
        name: 'Task created',
        description: 'created by the portal',
        created_type: 'USER',
        created_by: 'member',
        user_type: 'USER',
        user_id: 'member',
        additional_info: {},
        domain_id: 'd1',
        workspace_id: 'ws-1',
        project_id: 'p-1',
        task_id: 'task-1',
        created_at: expect.stringMatching(TS),
        updated_at: res.body.created_at,
      });
      const at = await ingest(
        action({ event_type: 'COMMENTED', user_type: 'APP', created_at: '2024-05-01T10:00:00Z', workspace_id: 'ws-1', additional_info: { comment_id: 'c-1' } }),
      );
      expect(at.body).toMatchObject({
        event_type: 'COMMENTED',
        created_type: 'APP',
        user_type: 'APP',
        additional_info: { comment_id: 'c-1' },
        created_at: '2024-05-01T10:00:00.000Z',
        updated_at: '2024-05-01T10:00:00.000Z',
      });
    });

    it('is idempotent on event_key: a retried delivery records nothing new', async () => {
      const a = action({ event_key: 'retry-1', event_type: 'CHANGE_STATUS' });
      const [r1, r2, r3] = await Promise.all([ingest(a), ingest(a), ingest(a)]);
      expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);
      expect(new Set([r1.body.event_id, r2.body.event_id, r3.body.event_id]).size).toBe(1);
      const { rows } = await t.db.pool.query("SELECT count(*)::int AS n FROM event WHERE event_key = 'retry-1'");
      expect(rows[0].n).toBe(1);
      const clash = await ingest({ ...a, task_id: 'task-other' });
      expect([clash.status, clash.body.error.code]).toEqual([409, 'ERROR_ALREADY_EXISTS']);
      // The same key in another domain is another action.
      expect((await ingest({ ...a, domain_id: 'd2', project_id: 'p-x' })).body.domain_id).toBe('d2');
    });

    it('needs a configured service token, never a user access token', async () => {
      const none = await request(t.app).post('/opsflow/v1/event/create').send(action());
      expect([none.status, none.body.error.code]).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      expect((await ingest(action(), 'wrong')).status).toBe(401);
      expect((await ingest(action(), `${INGEST}x`)).status).toBe(401);
      expect((await request(t.app).post('/opsflow/v1/event/create').set('Authorization', admin).send(action())).status).toBe(401);
      expect((await ingest(action(), 'old-token')).status).toBe(200);
      expect((await request(t.app).get('/opsflow/v1/event/create')).status).toBe(405);
      // The token is checked from the headers: a caller without one never gets its body read.
      const partial = await sendPartialRequest(t.app, { path: '/opsflow/v1/event/create', headers: { Authorization: 'Bearer wrong' } });
      expect(partial.statusLine).toMatch(/^HTTP\/1.1 401/);
      const off = await createTestOpsflow({ ingestTokens: [] });
      try {
        const res = await request(off.app).post('/opsflow/v1/event/create').set('Authorization', `Bearer ${INGEST}`).send(action());
        expect(res.status).toBe(401);
        expect(res.body.error.message).toContain('not configured');
      } finally {
        await off.close();
      }
    });

    it.each([
      [{ event_key: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'event_key'],
      [{ domain_id: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'domain_id'],
      [{ task_id: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'task_id'],
      [{ user_id: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'user_id'],
      [{ project_id: undefined }, 400, 'ERROR_REQUIRED_PARAMETER', 'project_id'],
      [{ name: '' }, 400, 'ERROR_REQUIRED_PARAMETER', 'name'],
      [{ event_type: 'ALERT' }, 400, 'ERROR_INVALID_PARAMETER', 'event_type'],
      [{ user_type: 'ROBOT' }, 400, 'ERROR_INVALID_PARAMETER', 'user_type'],
      [{ created_at: 'yesterday' }, 400, 'ERROR_INVALID_PARAMETER', 'created_at'],
      [{ extra: true }, 400, 'ERROR_INVALID_PARAMETER', 'extra'],
      [{ project_id: 'p-unknown' }, 404, 'ERROR_NOT_FOUND', 'project_id'],
      [{ project_id: 'p-x' }, 404, 'ERROR_NOT_FOUND', 'project_id'],
      [{ workspace_id: 'ws-2' }, 400, 'ERROR_INVALID_PARAMETER', 'workspace_id'],
    ])('validates an action %#', async (over, status, code, key) => {
      const res = await ingest(action(over));
      expect([res.status, res.body.error.code]).toEqual([status, code]);
      expect(res.body.error.message).toContain(key);
    });

    it('answers 503 (retry later) when the project directory cannot be read', async () => {
      const down = await createTestOpsflow({ ingestTokens: [INGEST] });
      try {
        down.deps.redis.disconnect();
        const res = await request(down.app).post('/opsflow/v1/event/create').set('Authorization', `Bearer ${INGEST}`).send(action());
        expect([res.status, res.body.error.code]).toEqual([503, 'ERROR_SERVICE_UNAVAILABLE']);
        expect((await request(down.app).get('/readyz')).status).toBe(503);
      } finally {
        await down.db.drop();
      }
    });

    it('refuses a body that is not JSON', async () => {
      const res = await request(t.app).post('/opsflow/v1/event/create').set('Authorization', `Bearer ${INGEST}`).set('content-type', 'application/json').send('{nope');
      expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_INVALID_JSON']);
    });
  });

  describe('list and stat', () => {
    beforeAll(async () => {
      await ingest(action({ event_key: 'h1', task_id: 'task-h', event_type: 'CREATED', created_at: '2024-01-01T00:00:00Z', user_id: 'u1' }));
      await ingest(action({ event_key: 'h2', task_id: 'task-h', event_type: 'UPDATED', created_at: '2024-01-02T00:00:00Z', user_id: 'u2', name: 'Priority raised' }));
      await ingest(action({ event_key: 'h3', task_id: 'task-h', event_type: 'CHANGE_STATUS', created_at: '2024-01-03T00:00:00Z', user_id: 'u1' }));
      await ingest(action({ event_key: 'h4', task_id: 'task-w2', project_id: 'p-2', event_type: 'COMMENTED', created_at: '2024-01-04T00:00:00Z', user_id: 'u3' }));
      await ingest(action({ event_key: 'hx', domain_id: 'd2', project_id: 'p-x', task_id: 'task-x' }));
    });

    const ids = (b: { results: { event_type: string; task_id: string }[] }) => b.results.map((r) => `${r.task_id}:${r.event_type}`);

    it('lists a task history in order, with every filter', async () => {
      const h = await call('list', admin, { task_id: 'task-h' });
      expect(h.status).toBe(200);
      expect(ids(h.body)).toEqual(['task-h:CREATED', 'task-h:UPDATED', 'task-h:CHANGE_STATUS']);
      expect(h.body.total_count).toBe(3);
      expect((await call('list', admin, { task_id: 'task-h', event_type: 'UPDATED' })).body.results[0]).toMatchObject({ name: 'Priority raised', user_id: 'u2' });
      expect((await call('list', admin, { task_id: 'task-h', user_id: 'u1' })).body.total_count).toBe(2);
      expect((await call('list', admin, { user_type: 'APP' })).body.results.every((r: { user_type: string }) => r.user_type === 'APP')).toBe(true);
      // upstream's current names filter the same fields; both names together must agree
      expect((await call('list', admin, { task_id: 'task-h', created_by: 'u1' })).body.total_count).toBe(2);
      expect((await call('list', admin, { task_id: 'task-h', created_by: 'u1', user_id: 'u1', created_type: 'USER' })).body.total_count).toBe(2);
      expect((await call('list', admin, { task_id: 'task-h', created_type: 'APP' })).body.total_count).toBe(0);
      const both = await call('list', admin, { created_by: 'u1', user_id: 'u2' });
      expect(both.status).toBe(400);
      expect(both.body.error.message).toContain('created_by');
      expect((await call('list', admin, { task_id: 'task-h', query: { filter: [{ k: 'created_by', v: 'u2', o: 'eq' }] } })).body.results[0]).toMatchObject({ created_by: 'u2', user_id: 'u2' });
      expect(ids((await call('list', admin, { workspace_id: 'ws-2' })).body)).toEqual(['task-w2:COMMENTED']);
      expect(ids((await call('list', admin, { project_id: 'p-2' })).body)).toEqual(['task-w2:COMMENTED']);
      const one = h.body.results[1];
      expect((await call('list', admin, { event_id: one.event_id })).body.results).toEqual([one]);
      const desc = await call('list', admin, { task_id: 'task-h', query: { sort: [{ key: 'created_at', desc: true }], page: { limit: 1 }, only: ['event_type'] } });
      expect(desc.body).toEqual({ results: [{ event_type: 'CHANGE_STATUS', created_at: '2024-01-03T00:00:00.000Z' }], total_count: 3 });
      expect((await call('list', admin, { query: { keyword: 'priority' } })).body.total_count).toBe(1);
      expect((await call('list', admin, { task_id: 'task-h', query: { filter: [{ key: 'created_at', value: '2024-01-02T12:00:00Z', operator: 'datetime_gt' }], count_only: true } })).body).toEqual({
        results: [],
        total_count: 1,
      });
      expect((await call('list', admin, { event_type: 'ALERT' })).status).toBe(400);
      expect((await call('list', admin, { query: { filter: [{ key: 'event_key', value: 'h1', operator: 'eq' }] } })).status).toBe(400);
    });

    it('scopes by role: domain admin sees the domain, workspace roles their workspace, USER nothing', async () => {
      const all = (await call('list', admin, { query: { filter: [{ key: 'task_id', value: ['task-h', 'task-w2'], operator: 'in' }] } })).body;
      expect(all.total_count).toBe(4);
      for (const auth of [owner1, member1]) {
        const ws1 = (await call('list', auth, { query: { filter: [{ key: 'task_id', value: ['task-h', 'task-w2'], operator: 'in' }] } })).body;
        expect(ws1.results.every((r: { workspace_id: string }) => r.workspace_id === 'ws-1')).toBe(true);
        expect(ws1.total_count).toBe(3);
        expect((await call('list', auth, { workspace_id: 'ws-2' })).body).toEqual({ results: [], total_count: 0 });
      }
      expect(ids((await call('list', owner2, {})).body)).toEqual(['task-w2:COMMENTED']);
      const user = await bearer({ domainId: 'd1', roleType: 'USER', userId: 'u' });
      expect((await call('list', user, {})).status).toBe(403);
      expect((await call('stat', user, { query: { distinct: 'task_id' } })).status).toBe(403);
      expect((await request(t.app).post('/opsflow/v1/event/list').send({})).status).toBe(401);
    });

    it('stats within what the caller may see', async () => {
      const q = { aggregate: [{ group: { keys: [{ key: 'event_type', name: 'type' }], fields: [{ name: 'n', operator: 'count' }] } }, { sort: [{ key: 'type' }] }] };
      const res = await call('stat', owner2, { query: q });
      expect(res.body).toEqual({ results: [{ type: 'COMMENTED', n: 1 }] });
      const byTask = await call('stat', admin, { query: { filter: [{ k: 'task_id', v: 'task-h', o: 'eq' }], ...q } });
      expect(byTask.body.results).toEqual([
        { type: 'CHANGE_STATUS', n: 1 },
        { type: 'CREATED', n: 1 },
        { type: 'UPDATED', n: 1 },
      ]);
      expect((await call('stat', admin, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      expect((await call('stat', admin, { query: { aggregate: [{ bogus: {} }] } })).status).toBe(400);
    });

    it('shows another domain nothing, and a body domain_id cannot widen access', async () => {
      expect(ids((await call('list', otherAdmin, {})).body)).toEqual(['task-1:CHANGE_STATUS', 'task-x:CREATED']);
      expect((await call('list', otherAdmin, { task_id: 'task-h' })).body).toEqual({ results: [], total_count: 0 });
      expect((await call('list', otherAdmin, { domain_id: 'd1' })).status).toBe(403);
      expect((await call('stat', otherAdmin, { domain_id: 'd1', query: { distinct: 'task_id' } })).status).toBe(403);
      expect((await call('stat', otherAdmin, { query: { distinct: 'task_id' } })).body.results).toEqual(['task-1', 'task-x']);
      expect((await call('list', admin, { domain_id: 'd1', task_id: 'task-h' })).body.total_count).toBe(3);
    });
  });
  describe('workspace members', () => {
    // G > G1 > project A: the member belongs to G (an ancestor of A's group); B is not theirs.
    const dir = (groupUsers: string[]) => membershipDirectory('ws-m', groupUsers);
    let member: string;
    let owner: string;
    let domainAdmin: string;
    const tasks = async (auth: string, body: object = {}) => {
      const res = await call('list', auth, body);
      expect(res.status).toBe(200);
      return res.body.results.map((r: { task_id: string }) => r.task_id).sort();
    };
    const count = async (auth: string) => (await call('stat', auth, { query: { aggregate: [{ count: { name: 'n' } }] } })).body.results[0]?.n ?? 0;

    beforeAll(async () => {
      await t.directory.publish('dm', dir(['member']));
      member = await bearer({ domainId: 'dm', workspaceId: 'ws-m', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
      owner = await bearer({ domainId: 'dm', workspaceId: 'ws-m', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
      domainAdmin = await bearer({ domainId: 'dm', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
      for (const [project_id, task_id] of [['A', 'task-a'], ['B', 'task-b']]) {
        expect((await ingest(action({ domain_id: 'dm', project_id, task_id }))).status).toBe(200);
      }
    });

    it('lists and counts only the events of their projects; owners and admins see all', async () => {
      expect(await tasks(member)).toEqual(['task-a']);
      expect(await count(member)).toBe(1);
      expect(await tasks(owner)).toEqual(['task-a', 'task-b']);
      expect(await tasks(domainAdmin)).toEqual(['task-a', 'task-b']);
      expect(await count(owner)).toBe(2);
      expect(await tasks(member, { query: { filter: [{ k: 'project_id', v: ['A', 'B'], o: 'in' }] } })).toEqual(['task-a']);
      const other = await call('list', member, { project_id: 'B' });
      expect(other.status).toBe(403);
      expect(other.body.error.code).toBe('ERROR_PERMISSION_DENIED');
      expect(await tasks(owner, { project_id: 'B' })).toEqual(['task-b']);
    });

    it('filter_or, keyword and stat distinct never widen a member\'s scope (docs/security.md, API1)', async () => {
      expect(await tasks(member, { query: { filter_or: [{ k: 'project_id', v: 'B', o: 'eq' }, { k: 'task_id', v: 'task-a', o: 'eq' }] } })).toEqual(['task-a']);
      expect(await tasks(member, { query: { filter_or: [{ k: 'task_id', v: 'task-b', o: 'eq' }] } })).toEqual([]);
      expect(await tasks(member, { query: { keyword: 'task-b' } })).toEqual([]);
      const distinct = await call('stat', member, { query: { distinct: 'task_id' } });
      expect(distinct.body.results).toEqual(['task-a']);
    });

    it('a removal from the group takes effect on the next request', async () => {
      await t.directory.publish('dm', dir([]));
      expect(await tasks(member)).toEqual([]);
      expect(await count(member)).toBe(0);
      expect(await tasks(owner)).toEqual(['task-a', 'task-b']);
      await t.directory.publish('dm', dir(['member']));
      expect(await tasks(member)).toEqual(['task-a']);
    });
  });
});
