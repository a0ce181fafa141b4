import request from 'supertest';
import { bearer, membershipDirectory } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from './test-support';

/**
 * WORKSPACE_MEMBER tokens see and change only the webhooks and events of their projects (libs/directory
 * ProjectScope, upstream's user_projects); data sources are domain-level and read by every workspace
 * role alike. G > G1 > project A: the member belongs to G, an ancestor of A's group; B is not theirs.
 */
describe('monitoring: workspace members see only their projects', () => {
  let t: TestMonitoring;
  let owner: string;
  let member: string;
  let admin: string;
  const dir = (groupUsers: string[]) => membershipDirectory('ws-1', groupUsers);
  const webhooks: Record<string, string> = {};
  const events: Record<string, string> = {};

  const call = (path: string, auth: string, body: object = {}) => request(t.app).post(`/monitoring/v1/${path}`).set('Authorization', auth).send(body);
  const names = async (resource: string, auth: string, body: object = {}) => {
    const res = await call(`${resource}/list`, auth, body);
    expect(res.status).toBe(200);
    return res.body.results.map((r: { name?: string; title?: string }) => r.name ?? r.title).sort();
  };
  const count = async (resource: string, auth: string) =>
    (await call(`${resource}/stat`, auth, { query: { aggregate: [{ count: { name: 'n' } }] } })).body.results[0]?.n ?? 0;

  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false });
    await t.publish('dm', dir(['member']));
    owner = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    admin = await bearer({ domainId: 'dm', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    for (const project_id of ['A', 'B']) {
      const res = await call('webhook/create', owner, { name: `hook-${project_id}`, plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id });
      expect(res.status).toBe(200);
      webhooks[project_id] = res.body.webhook_id;
      // Events as the worker stores them (the ingestion path is tested in event/ and ingest/).
      events[project_id] = `event-${project_id.toLowerCase()}00000000000`;
      await t.deps.pool.query(
        `INSERT INTO event (domain_id, event_id, event_key, event_type, title, workspace_id, project_id, webhook_id, delivery_id, delivery_seq)
         VALUES ('dm', $1, $2, 'ALERT', $3, 'ws-1', $4, $5, $6, 0)`,
        [events[project_id], `key-${project_id}`, `event in ${project_id}`, project_id, webhooks[project_id], `delivery-${project_id}`],
      );
    }
  });
  afterAll(() => t.close());

  it('webhooks: list, get and stat show a member their projects only; owners and admins see all', async () => {
    expect(await names('webhook', member)).toEqual(['hook-A']);
    expect(await names('webhook', owner)).toEqual(['hook-A', 'hook-B']);
    expect(await names('webhook', admin)).toEqual(['hook-A', 'hook-B']);
    expect(await count('webhook', member)).toBe(1);
    expect(await count('webhook', owner)).toBe(2);
    expect((await call('webhook/get', member, { webhook_id: webhooks.A })).status).toBe(200);
    expect((await call('webhook/get', member, { webhook_id: webhooks.B })).status).toBe(404);
    const other = await call('webhook/list', member, { project_id: 'B' });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ERROR_PERMISSION_DENIED');
  });

  it('webhooks: a member creates and changes webhooks of their projects only', async () => {
    const plugin_info = { plugin_id: 'plugin-api-direct-mon-webhook' };
    const mine = await call('webhook/create', member, { name: 'member-hook', plugin_info, project_id: 'A' });
    expect(mine.status).toBe(200);
    const refused = await call('webhook/create', member, { name: 'x', plugin_info, project_id: 'B' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect((await call('webhook/update', member, { webhook_id: mine.body.webhook_id, name: 'renamed' })).body.name).toBe('renamed');
    for (const [verb, body] of [
      ['update', { name: 'x' }],
      ['disable', {}],
      ['enable', {}],
      ['update-plugin', { upgrade_mode: 'AUTO' }],
      ['verify-plugin', {}],
      ['delete', {}],
    ] as const) {
      const res = await call(`webhook/${verb}`, member, { webhook_id: webhooks.B, ...body });
      expect([verb, res.status]).toEqual([verb, 404]);
    }
    expect((await call('webhook/delete', member, { webhook_id: mine.body.webhook_id })).status).toBe(200);
    expect((await call('webhook/disable', owner, { webhook_id: webhooks.B })).status).toBe(200);
    expect((await call('webhook/enable', owner, { webhook_id: webhooks.B })).status).toBe(200);
  });

  it('events: list, get and stat show a member their projects only', async () => {
    expect(await names('event', member)).toEqual(['event in A']);
    expect(await names('event', owner)).toEqual(['event in A', 'event in B']);
    expect(await names('event', admin)).toEqual(['event in A', 'event in B']);
    expect(await count('event', member)).toBe(1);
    expect((await call('event/get', member, { event_id: events.A })).status).toBe(200);
    expect((await call('event/get', member, { event_id: events.B })).status).toBe(404);
    expect((await call('event/get', owner, { event_id: events.B })).status).toBe(200);
    expect(await names('event', member, { webhook_id: webhooks.B })).toEqual([]);
    expect((await call('event/list', member, { project_id: 'B' })).status).toBe(403);
  });

  it('filter_or, keyword and stat distinct never widen a member\'s scope, for webhooks and events (docs/security.md, API1)', async () => {
    const orB = (key: string, value: string) => ({ query: { filter_or: [{ k: 'project_id', v: 'B', o: 'eq' }, { k: key, v: value, o: 'eq' }] } });
    expect(await names('webhook', member, orB('name', 'hook-A'))).toEqual(['hook-A']);
    expect(await names('webhook', member, { query: { filter_or: [{ k: 'project_id', v: 'B', o: 'eq' }] } })).toEqual([]);
    // A keyword also matches ids (webhook-<hex> can hold "hook-b"): what it finds stays within the member's own.
    expect(await names('webhook', member, { query: { keyword: 'hook-B' } })).not.toContain('hook-B');
    expect(await names('webhook', member, { query: { keyword: 'hook' } })).toEqual(['hook-A']);
    expect(await names('event', member, orB('event_key', 'key-A'))).toEqual(['event in A']);
    expect(await names('event', member, { query: { keyword: 'B' } })).not.toContain('event in B');
    expect(await names('event', member, { query: { keyword: 'A' } })).toEqual(['event in A']);
    for (const resource of ['webhook', 'event']) {
      const distinct = await call(`${resource}/stat`, member, { query: { distinct: 'project_id' } });
      expect([resource, distinct.body.results]).toEqual([resource, ['A']]);
    }
  });

  it('data sources are domain-level: a member reads them as an owner does', async () => {
    expect((await call('data-source/list', member)).status).toBe(200);
    expect((await call('data-source/list', member)).body.total_count).toBe((await call('data-source/list', owner)).body.total_count);
  });

  it('a removal from the ancestor group takes effect on the next request', async () => {
    await t.publish('dm', dir([]));
    expect(await names('webhook', member)).toEqual([]);
    expect(await names('event', member)).toEqual([]);
    expect((await call('webhook/get', member, { webhook_id: webhooks.A })).status).toBe(404);
    expect((await call('event/get', member, { event_id: events.A })).status).toBe(404);
    expect((await call('webhook/create', member, { name: 'late', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'A' })).status).toBe(403);
    expect(await names('webhook', owner)).toEqual(['hook-A', 'hook-B']);
    await t.publish('dm', dir(['member']));
    expect(await names('webhook', member)).toEqual(['hook-A']);
  });
});
