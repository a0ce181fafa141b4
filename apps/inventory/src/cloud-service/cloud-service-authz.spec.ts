import request from 'supertest';
import { bearer } from '@platform/testing';
import type { DomainDirectory } from '@platform/directory';
import { createTestInventory } from '../test-support';

/**
 * Authorization by object, by property and by query path (OWASP API1 and API3; docs/security.md):
 * another domain's or workspace's record is not found on every per-record operation and is left as it
 * was; a body cannot set what the platform owns (domain, workspace, id, state, timestamps); a
 * WORKSPACE_MEMBER sees only their projects through every query path.
 */
describe('inventory cloud-service: authorization on every path', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;
  let member: string;
  let otherDomain: string;
  let otherWorkspace: string;
  const ids: Record<string, string> = {};
  const dir: DomainDirectory = {
    groups: [{ project_group_id: 'G', workspace_id: 'ws-1', parent_group_id: '', users: [] }],
    projects: [
      { project_id: 'mine', workspace_id: 'ws-1', project_group_id: 'G', name: 'mine', users: ['member'] },
      { project_id: 'theirs', workspace_id: 'ws-1', project_group_id: '', name: 'theirs', users: [] },
    ],
  };

  const call = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/inventory/v1/cloud-service/${verb}`).set('Authorization', auth).send(body);
  const base = { provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance' };

  beforeAll(async () => {
    t = await createTestInventory();
    await t.publish('d1', dir);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    for (const [name, project_id] of [['alpha-mine', 'mine'], ['alpha-theirs', 'theirs'], ['beta-mine', 'mine'], ['beta-theirs', 'theirs']]) {
      const res = await call('create', owner, { ...base, name, project_id, data: { kind: name.split('-')[1] }, tags: { team: name } });
      expect(res.status).toBe(200);
      ids[name] = res.body.cloud_service_id;
    }
  });
  afterAll(() => t.close());

  const unchanged = async (id: string, name: string) => {
    const res = await call('get', owner, { cloud_service_id: id });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(name);
  };

  it('another domain or workspace gets 404 on get, update and delete, and the record is left as it was (API1)', async () => {
    const id = ids['alpha-theirs'];
    for (const auth of [otherDomain, otherWorkspace]) {
      for (const [verb, body] of [['get', {}], ['update', { name: 'taken' }], ['delete', {}]] as const) {
        const res = await call(verb, auth, { cloud_service_id: id, ...body });
        expect([verb, res.status, res.body.error?.code]).toEqual([verb, 404, 'ERROR_NOT_FOUND']);
      }
    }
    await unchanged(id, 'alpha-theirs');
    // a member: someone else's project is not found either
    for (const [verb, body] of [['get', {}], ['update', { name: 'taken' }], ['delete', {}]] as const) {
      expect((await call(verb, member, { cloud_service_id: id, ...body })).status).toBe(404);
    }
    await unchanged(id, 'alpha-theirs');
  });

  it('a body cannot set what the platform owns: domain, workspace, id, state, timestamps (API3)', async () => {
    const id = ids['beta-theirs'];
    const owned: object[] = [
      { workspace_id: 'ws-2' }, { state: 'DELETED' }, { created_at: '2000-01-01T00:00:00Z' },
      { updated_at: '2000-01-01T00:00:00Z' }, { deleted_at: '2000-01-01T00:00:00Z' }, { provider: 'gcp' }, { ref_cloud_service_type: 'x' },
    ];
    for (const extra of owned) {
      const res = await call('update', owner, { cloud_service_id: id, name: 'moved', ...extra });
      expect([extra, res.status]).toEqual([extra, 400]);
      expect(res.body.error.code).toBe('ERROR_INVALID_PARAMETER');
    }
    expect((await call('update', owner, { cloud_service_id: id, name: 'moved', domain_id: 'd2' })).status).toBe(403);
    const created = await call('create', owner, { ...base, name: 'chosen', data: {}, workspace_id: 'ws-2', cloud_service_id: 'cloud-svc-chosen' });
    expect(created.status).toBe(400);
    await unchanged(id, 'beta-theirs');
  });

  it('a member sees only their projects through filter_or, keyword, stat, distinct, analyze and export (API1)', async () => {
    const names = async (body: object) => {
      const res = await call('list', member, body);
      expect(res.status).toBe(200);
      return res.body.results.map((r: { name: string }) => r.name).sort();
    };
    // filter_or is ORed with itself only, never with the scope
    expect(await names({ query: { filter_or: [{ k: 'project_id', v: 'theirs', o: 'eq' }, { k: 'name', v: 'alpha', o: 'contain' }] } })).toEqual(['alpha-mine']);
    expect(await names({ query: { filter_or: [{ k: 'project_id', v: 'theirs', o: 'eq' }] } })).toEqual([]);
    expect(await names({ query: { keyword: 'theirs' } })).toEqual([]);
    expect(await names({ query: { keyword: 'alpha' } })).toEqual(['alpha-mine']);
    expect(await names({ query: { filter: [{ k: 'state', v: ['ACTIVE', 'DELETED'], o: 'in' }] } })).toEqual(['alpha-mine', 'beta-mine']);
    const distinct = await call('stat', member, { query: { distinct: 'name' } });
    expect(distinct.body.results.sort()).toEqual(['alpha-mine', 'beta-mine']);
    const agg = await call('stat', member, { query: { filter_or: [{ k: 'project_id', v: 'theirs', o: 'eq' }, { k: 'name', v: 'a', o: 'contain' }], aggregate: [{ group: { keys: [{ key: 'project_id', name: 'p' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(agg.body.results).toEqual([{ p: 'mine', n: 2 }]);
    const analyze = await call('analyze', member, { query: { group_by: ['data.kind', 'tags.team'], fields: { n: { operator: 'count' } }, filter_or: [{ k: 'data.kind', v: 'theirs', o: 'eq' }, { k: 'name', v: 'beta', o: 'contain' }] } });
    expect(analyze.body.results).toEqual([{ kind: 'mine', team: 'beta-mine', n: 1 }]);
    // export: SEARCH with filter_or and keyword, ANALYZE; the CSV holds their projects only
    const res = await call('export', member, {
      file_format: 'CSV',
      options: [
        { name: 's', query_type: 'SEARCH', search_query: { fields: ['name'], filter_or: [{ k: 'project_id', v: 'theirs', o: 'eq' }, { k: 'name', v: 'a', o: 'contain' }], sort: [{ key: 'name' }] } },
        { name: 'k', query_type: 'SEARCH', search_query: { fields: ['name'], keyword: 'beta', sort: [{ key: 'name' }] } },
        { name: 'a', query_type: 'ANALYZE', analyze_query: { group_by: ['project_id'], fields: { n: { operator: 'count' } } } },
      ],
    });
    expect(res.status).toBe(200);
    const zip = await request(t.app).get(new URL(res.body.download_url).pathname).buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    const JSZip = (await import('jszip')).default;
    const files = await JSZip.loadAsync(zip.body as Buffer);
    expect(await files.file('s.csv')!.async('string')).toBe('name\r\nalpha-mine\r\nbeta-mine\r\n');
    expect(await files.file('k.csv')!.async('string')).toBe('name\r\nbeta-mine\r\n');
    expect(await files.file('a.csv')!.async('string')).toBe('project_id,n\r\nmine,2\r\n');
  });

  it('bounds what one request may carry: 200 tags, 1,000 addresses, 255-character names, a 1 MiB body (API4)', async () => {
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expect((await call('create', owner, { ...base, name: 'tagged', data: {}, tags: tags(200) })).status).toBe(200);
    const tooMany = await call('create', owner, { ...base, name: 'tagged', data: {}, tags: tags(201) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain('key = tags');
    const ips = await call('create', owner, { ...base, name: 'ips', data: {}, ip_addresses: Array.from({ length: 1001 }, (_, i) => `10.0.${i >> 8}.${i & 255}`) });
    expect(ips.status).toBe(400);
    expect((await call('create', owner, { ...base, name: 'n'.repeat(256), data: {} })).status).toBe(400);
    const huge = await call('create', owner, { ...base, name: 'huge', data: { blob: 'x'.repeat(1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.error.status).toBe(413);
    const update = await call('update', owner, { cloud_service_id: ids['alpha-mine'], tags: tags(201) });
    expect(update.status).toBe(400);
  });
});
