import request from 'supertest';
import { bearer } from '@platform/testing';
import type { DomainDirectory } from '@platform/directory';
import { createTestInventory } from '../test-support';

/**
 * WORKSPACE_MEMBER tokens see and write only the member's projects (libs/directory ProjectScope):
 * G > G1 > project A (the member belongs to G, an ancestor of A's group); project B in no group of
 * theirs; project C with the member among its own users only after a change.
 */
describe('inventory cloud-service: workspace members see only their projects', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;
  let member: string;
  let admin: string;
  const dir = (over: { G?: string[]; C?: string[] } = {}): DomainDirectory => ({
    groups: [
      { project_group_id: 'G', workspace_id: 'ws-1', parent_group_id: '', users: over.G ?? ['member'] },
      { project_group_id: 'G1', workspace_id: 'ws-1', parent_group_id: 'G', users: [] },
      { project_group_id: 'X', workspace_id: 'ws-1', parent_group_id: '', users: [] },
    ],
    projects: [
      { project_id: 'A', workspace_id: 'ws-1', project_group_id: 'G1', name: 'A', users: [] },
      { project_id: 'B', workspace_id: 'ws-1', project_group_id: 'X', name: 'B', users: [] },
      { project_id: 'C', workspace_id: 'ws-1', project_group_id: '', name: 'C', users: over.C ?? [] },
    ],
  });
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestInventory();
    await t.publish('dm', dir());
    owner = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    admin = await bearer({ domainId: 'dm', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    for (const [name, project_id] of [['in-a', 'A'], ['in-b', 'B'], ['in-c', 'C'], ['no-project', undefined]] as const) {
      const res = await call('create', owner, { ...base, name, data: { n: name }, ...(project_id && { project_id }) });
      expect(res.status).toBe(200);
      ids[name] = res.body.cloud_service_id;
    }
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) =>
    request(t.app).post(`/inventory/v1/cloud-service/${verb}`).set('Authorization', auth).send(body);
  const base = { provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance' };
  const names = async (auth: string, body: object = {}) => {
    const res = await call('list', auth, body);
    expect(res.status).toBe(200);
    return res.body.results.map((r: { name: string }) => r.name).sort();
  };
  const count = async (auth: string) => {
    const res = await call('stat', auth, { query: { aggregate: [{ count: { name: 'n' } }] } });
    expect(res.status).toBe(200);
    return res.body.results[0].n;
  };

  it('reads: list, get, stat and analyze show a member the projects of their groups (at any depth) only', async () => {
    expect(await names(member)).toEqual(['in-a']);
    expect(await names(owner)).toEqual(['in-a', 'in-b', 'in-c', 'no-project']);
    expect(await names(admin)).toEqual(['in-a', 'in-b', 'in-c', 'no-project']);
    expect(await count(member)).toBe(1);
    expect(await count(owner)).toBe(4);
    expect((await call('get', member, { cloud_service_id: ids['in-a'] })).status).toBe(200);
    for (const n of ['in-b', 'in-c', 'no-project']) {
      const res = await call('get', member, { cloud_service_id: ids[n] });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('ERROR_NOT_FOUND');
    }
    const analyze = await call('analyze', member, { query: { group_by: ['project_id'], fields: { n: { operator: 'count' } } } });
    expect(analyze.body.results).toEqual([{ project_id: 'A', n: 1 }]);
    // A query filter only narrows; asking for someone else's project by the request field is refused.
    expect(await names(member, { query: { filter: [{ k: 'project_id', v: ['A', 'B'], o: 'in' }] } })).toEqual(['in-a']);
    expect(await names(member, { project_group_id: 'X' })).toEqual([]);
    const other = await call('list', member, { project_id: 'B' });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect(await names(owner, { project_id: 'B' })).toEqual(['in-b']);
  });

  it('writes: a member creates and updates only into their projects', async () => {
    const made = await call('create', member, { ...base, name: 'member-made', data: {}, project_id: 'A' });
    expect(made.status).toBe(200);
    const refused = await call('create', member, { ...base, name: 'nope', data: {}, project_id: 'B' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect((await call('create', member, { ...base, name: 'nope', data: {}, project_id: 'no-such' })).status).toBe(403);
    const missing = await call('create', member, { ...base, name: 'nope', data: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    // Update: their record stays in their projects; someone else's is not found.
    expect((await call('update', member, { cloud_service_id: made.body.cloud_service_id, name: 'renamed' })).body.name).toBe('renamed');
    expect((await call('update', member, { cloud_service_id: made.body.cloud_service_id, project_id: 'B' })).status).toBe(403);
    expect((await call('update', member, { cloud_service_id: ids['in-b'], name: 'x' })).status).toBe(404);
    expect((await call('delete', member, { cloud_service_id: ids['in-b'] })).status).toBe(404);
    expect((await call('delete', member, { cloud_service_id: made.body.cloud_service_id })).status).toBe(200);
    // The owner is not limited.
    expect((await call('create', owner, { ...base, name: 'owner-b', data: {}, project_id: 'B' })).status).toBe(200);
    expect((await call('create', owner, { ...base, name: 'owner-none', data: {} })).status).toBe(200);
  });

  it('exports only what the member may see, and a download after a removal drops what was removed', async () => {
    const exportOf = async (auth: string) => {
      const res = await call('export', auth, {
        file_format: 'CSV',
        options: [{ name: 'cs', query_type: 'SEARCH', search_query: { fields: ['name'], filter: [{ k: 'name', v: 'in-', o: 'contain' }], sort: [{ key: 'name' }] } }],
      });
      return res;
    };
    const download = async (url: string) => (await request(t.app).get(new URL(url).pathname)).text.trim().split(/\r\n/);
    const asMember = await exportOf(member);
    expect(asMember.status).toBe(200);
    const asOwner = await exportOf(owner);
    expect(await download(asOwner.body.download_url)).toEqual(['name', 'in-a', 'in-b', 'in-c']);
    expect(await download(asMember.body.download_url)).toEqual(['name', 'in-a']);

    // The member joins C: a new export has it. Then leaves G: the pending download drops A.
    await t.publish('dm', dir({ C: ['member'] }));
    const later = await exportOf(member);
    await t.publish('dm', dir({ G: [], C: ['member'] }));
    expect(await download(later.body.download_url)).toEqual(['name', 'in-c']);
    await t.publish('dm', dir({ G: [], C: [] }));
    expect((await exportOf(member)).body.error.code).toBe('ERROR_NO_DATA_TO_EXPORT');
    await t.publish('dm', dir());
  });

  it('a removal from the ancestor group takes effect on the next request; adding the member to a project brings it in', async () => {
    expect(await names(member)).toContain('in-a');
    await t.publish('dm', dir({ G: [] }));
    expect(await names(member)).toEqual([]);
    expect((await call('get', member, { cloud_service_id: ids['in-a'] })).status).toBe(404);
    expect((await call('create', member, { ...base, name: 'late', data: {}, project_id: 'A' })).status).toBe(403);
    await t.publish('dm', dir({ G: [], C: ['member'] }));
    expect(await names(member)).toEqual(['in-c']);
    expect(await count(member)).toBe(1);
  });
});
