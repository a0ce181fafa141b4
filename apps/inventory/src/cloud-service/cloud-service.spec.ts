import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestInventory } from '../test-support';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('inventory cloud-service', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;
  let member: string;
  let domainAdmin: string;
  let otherWorkspace: string;
  let otherDomain: string;

  beforeAll(async () => {
    t = await createTestInventory();
    // identity's directory: g1 > g2 in ws-1; p1 in g1, p2 in g2, p3 loose in ws-1, p9 in ws-2. The
    // member belongs to g2 and to p3 (so sees p2 and p3; member-only rules are in cloud-service-members.spec.ts).
    await t.publish('d1', {
      groups: [
        { project_group_id: 'g1', workspace_id: 'ws-1', parent_group_id: '' },
        { project_group_id: 'g2', workspace_id: 'ws-1', parent_group_id: 'g1', users: ['member'] },
        { project_group_id: 'g9', workspace_id: 'ws-2', parent_group_id: '' },
      ],
      projects: [
        { project_id: 'p1', workspace_id: 'ws-1', project_group_id: 'g1', name: 'Project One' },
        { project_id: 'p2', workspace_id: 'ws-1', project_group_id: 'g2', name: 'Project Two' },
        { project_id: 'p3', workspace_id: 'ws-1', project_group_id: '', name: 'Project Three', users: ['member'] },
        { project_id: 'p9', workspace_id: 'ws-2', project_group_id: 'g9', name: 'Elsewhere' },
      ],
    });
    await t.publish('d2', { groups: [], projects: [{ project_id: 'p1', workspace_id: 'ws-1', project_group_id: '', name: 'd2 p1' }] });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    domainAdmin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner2' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) =>
    request(t.app).post(`/inventory/v1/cloud-service/${verb}`).set('Authorization', auth).send(body);
  const base = { provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance' };
  const create = async (body: object, auth = owner) => {
    const res = await call('create', auth, { ...base, data: {}, ...body });
    expect(res.status).toBe(200);
    return res.body;
  };
  const ids = (res: request.Response) => res.body.results.map((r: { name: string }) => r.name).sort();

  describe('create', () => {
    it('creates a record with every field of CloudServiceInfo', async () => {
      const before = Date.now();
      const cs = await create({
        name: 'web-1',
        account: '1234',
        instance_type: 't3.micro',
        instance_size: 1.5,
        ip_addresses: ['10.0.0.1', '54.1.2.3'],
        data: { power_state: 'RUNNING', cpu: { cores: 2 } },
        metadata: { view: { table: [] } },
        reference: { resource_id: 'arn:aws:ec2:i-1' },
        tags: { env: 'prod', team: 'web' },
        region_code: 'us-east-1',
        project_id: 'p1',
      });
      expect(cs).toEqual({
        cloud_service_id: expect.stringMatching(/^cloud-svc-[0-9a-f]{12}$/),
        name: 'web-1',
        state: 'ACTIVE',
        ip_addresses: ['10.0.0.1', '54.1.2.3'],
        account: '1234',
        instance_type: 't3.micro',
        instance_size: 1.5,
        cloud_service_type: 'Instance',
        cloud_service_group: 'EC2',
        provider: 'aws',
        data: { power_state: 'RUNNING', cpu: { cores: 2 } },
        metadata: { aws: { view: { table: [] } } },
        reference: { resource_id: 'arn:aws:ec2:i-1', external_link: '' },
        tags: { env: 'prod', team: 'web' },
        tag_keys: { aws: ['env', 'team'] },
        collection_info: { service_account_id: '', secret_id: '', collector_id: '', last_collected_at: expect.stringMatching(ISO) },
        region_code: 'us-east-1',
        domain_id: 'd1',
        workspace_id: 'ws-1',
        project_id: 'p1',
        launched_at: expect.stringMatching(ISO),
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        deleted_at: '',
      });
      expect(Date.parse(cs.created_at)).toBeGreaterThanOrEqual(before - 5);
      expect(cs.updated_at).toBe(cs.created_at);
      expect(cs.launched_at).toBe(cs.created_at);
    });

    it('keeps the cloud service types of the workspace (one row per classification)', async () => {
      await create({ name: 'type-a', cloud_service_type: 'Volume' });
      await create({ name: 'type-b', cloud_service_type: 'Volume' });
      const types = await t.deps.prisma.cloudServiceType.findMany({ where: { domain_id: 'd1', cloud_service_type: 'Volume' } });
      expect(types).toHaveLength(1);
      expect(types[0]).toMatchObject({ workspace_id: 'ws-1', provider: 'aws', cloud_service_group: 'EC2' });
      const row = await t.deps.prisma.cloudService.findFirst({ where: { name: 'type-a' } });
      expect(row?.ref_cloud_service_type).toBe('aws.EC2.Volume');
    });

    it('requires the classification and data, and validates every field', async () => {
      for (const key of ['provider', 'cloud_service_group', 'cloud_service_type', 'data']) {
        const body: Record<string, unknown> = { ...base, data: {} };
        delete body[key];
        const res = await call('create', owner, body);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER', message: expect.stringContaining(`key = ${key}`) });
      }
      const empty = await call('create', owner, { ...base, data: {}, provider: '' });
      expect(empty.body.error).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER', message: expect.stringContaining('key = provider') });
      const bad: [object, string][] = [
        [{ data: 'x' }, 'data'],
        [{ instance_size: 'big' }, 'instance_size'],
        [{ ip_addresses: 'x' }, 'ip_addresses'],
        [{ tags: [] }, 'tags'],
        [{ reference: { resource_id: 1 } }, 'reference.resource_id'],
        [{ reference: { nope: 'x' } }, 'reference.nope'],
        [{ state: 'DELETED' }, 'state'],
        [{ launched_at: '2024-01-01' }, 'launched_at'],
      ];
      for (const [patch, key] of bad) {
        const res = await call('create', owner, { ...base, data: {}, ...patch });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('ERROR_INVALID_PARAMETER');
        expect(res.body.error.message).toContain(`key = ${key}`);
      }
    });

    it('accepts only a project of the caller’s workspace', async () => {
      for (const project_id of ['p-nope', 'p9']) {
        const res = await call('create', owner, { ...base, data: {}, project_id });
        expect(res.status).toBe(404);
        expect(res.body.error.message).toContain('project_id');
      }
      expect((await call('create', otherDomain, { ...base, data: {}, project_id: 'p2' })).status).toBe(404);
      expect((await create({ name: 'member-made', project_id: 'p3' }, member)).project_id).toBe('p3');
    });

    it('needs a workspace role with the write permission', async () => {
      expect((await request(t.app).post('/inventory/v1/cloud-service/create').send({ ...base, data: {} })).status).toBe(401);
      expect((await call('create', 'Bearer nope', { ...base, data: {} })).status).toBe(401);
      expect((await call('create', domainAdmin, { ...base, data: {} })).status).toBe(403);
      const readOnly = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', permissions: ['inventory:CloudService.read'] });
      expect((await call('create', readOnly, { ...base, data: {} })).status).toBe(403);
      expect((await call('list', readOnly)).status).toBe(200);
      // the token is checked before the body: an anonymous caller learns nothing of the shape
      expect((await request(t.app).post('/inventory/v1/cloud-service/create').send({})).status).toBe(401);
    });
  });

  describe('get, update, delete', () => {
    it('gets a record only within the caller’s domain and workspace', async () => {
      const cs = await create({ name: 'get-me' });
      const id = cs.cloud_service_id;
      expect((await call('get', owner, { cloud_service_id: id })).body).toEqual(cs);
      // A record of no project is not a member's (upstream: project_id in user_projects).
      expect((await call('get', member, { cloud_service_id: id })).status).toBe(404);
      const theirs = await create({ name: 'get-mine', project_id: 'p2' });
      expect((await call('get', member, { cloud_service_id: theirs.cloud_service_id })).body.name).toBe('get-mine');
      expect((await call('get', domainAdmin, { cloud_service_id: id })).body.name).toBe('get-me');
      for (const auth of [otherWorkspace, otherDomain]) {
        const res = await call('get', auth, { cloud_service_id: id });
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('ERROR_NOT_FOUND');
      }
      // a body domain_id never widens what a caller sees (naming another domain is refused outright)
      expect((await call('get', otherDomain, { cloud_service_id: id, domain_id: 'd1' })).status).toBe(403);
      expect((await call('get', otherDomain, { cloud_service_id: id, domain_id: 'd2' })).status).toBe(404);
      expect((await call('get', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      expect((await call('get', owner, { cloud_service_id: 'cloud-svc-nope' })).status).toBe(404);
    });

    it('updates as upstream: data, tags and reference merged, metadata per provider, classification fixed', async () => {
      const cs = await create({
        name: 'upd',
        data: { a: 1, b: { c: 2 } },
        tags: { env: 'dev', keep: 'yes' },
        metadata: { m: 1 },
        reference: { resource_id: 'r-1', external_link: 'https://x' },
        ip_addresses: ['1.1.1.1'],
      });
      await new Promise((r) => setTimeout(r, 5));
      const res = await call('update', owner, {
        cloud_service_id: cs.cloud_service_id,
        name: 'upd-2',
        account: 'acc',
        instance_type: 'm5.large',
        instance_size: 4,
        ip_addresses: ['2.2.2.2'],
        data: { b: { d: 3 }, e: true },
        tags: { env: 'prod', new: 'tag' },
        metadata: { m: 2 },
        reference: { external_link: 'https://y' },
        region_code: 'eu-west-1',
        project_id: 'p2',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        name: 'upd-2',
        account: 'acc',
        instance_type: 'm5.large',
        instance_size: 4,
        ip_addresses: ['2.2.2.2'],
        data: { a: 1, b: { d: 3 }, e: true },
        tags: { env: 'prod', keep: 'yes', new: 'tag' },
        tag_keys: { aws: ['env', 'keep', 'new'] },
        metadata: { aws: { m: 2 } },
        reference: { resource_id: 'r-1', external_link: 'https://y' },
        region_code: 'eu-west-1',
        project_id: 'p2',
        provider: 'aws',
        cloud_service_group: 'EC2',
        cloud_service_type: 'Instance',
        created_at: cs.created_at,
        launched_at: cs.launched_at,
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(cs.updated_at));
      expect(Date.parse(res.body.collection_info.last_collected_at)).toBeGreaterThan(Date.parse(cs.collection_info.last_collected_at));
      // the classification cannot change
      for (const key of ['provider', 'cloud_service_group', 'cloud_service_type', 'state']) {
        const r = await call('update', owner, { cloud_service_id: cs.cloud_service_id, [key]: 'x' });
        expect(r.status).toBe(400);
        expect(r.body.error.message).toContain(`key = ${key}`);
      }
      expect((await call('update', owner, { cloud_service_id: cs.cloud_service_id, project_id: 'p9' })).status).toBe(404);
      expect((await call('update', otherDomain, { cloud_service_id: cs.cloud_service_id, name: 'x' })).status).toBe(404);
      expect((await call('update', otherWorkspace, { cloud_service_id: cs.cloud_service_id, name: 'x' })).status).toBe(404);
      expect((await call('update', domainAdmin, { cloud_service_id: cs.cloud_service_id, name: 'x' })).status).toBe(403);
      expect((await call('update', owner, { name: 'x' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      // One plain field alone (no metadata or tags to key by provider): found by the fuzzer as a 500.
      const renamed = await call('update', owner, { cloud_service_id: cs.cloud_service_id, name: 'renamed' });
      expect([renamed.status, renamed.body.name]).toEqual([200, 'renamed']);
      // A number JavaScript holds and float8 does not once Prisma has printed it: a 400, not a 500.
      const huge = await call('create', owner, { ...base, data: {}, instance_size: -1.7976931348623155e308 });
      expect([huge.status, huge.body.error?.code]).toEqual([400, 'ERROR_INVALID_ARGUMENT']);
    });

    it('concurrent updates of different keys lose nothing', async () => {
      const cs = await create({ name: 'race', data: {} });
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => call('update', owner, { cloud_service_id: cs.cloud_service_id, data: { [`k${i}`]: i }, tags: { [`t${i}`]: 'x' } })),
      );
      const got = (await call('get', owner, { cloud_service_id: cs.cloud_service_id })).body;
      expect(Object.keys(got.data).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
      expect(got.tag_keys.aws).toHaveLength(10);
    });

    it('deletes softly: DELETED with deleted_at, hidden from list, and no second change', async () => {
      const cs = await create({ name: 'to-delete' });
      expect((await call('delete', otherDomain, { cloud_service_id: cs.cloud_service_id })).status).toBe(404);
      expect((await call('delete', otherWorkspace, { cloud_service_id: cs.cloud_service_id })).status).toBe(404);
      const del = await call('delete', owner, { cloud_service_id: cs.cloud_service_id });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({});
      const got = (await call('get', owner, { cloud_service_id: cs.cloud_service_id })).body;
      expect(got.state).toBe('DELETED');
      expect(got.deleted_at).toMatch(ISO);
      expect(ids(await call('list', owner, { name: 'to-delete' }))).toEqual([]);
      expect(ids(await call('list', owner, { name: 'to-delete', state: 'DELETED' }))).toEqual(['to-delete']);
      const viaQuery = await call('list', owner, { query: { filter: [{ k: 'state', v: ['ACTIVE', 'DELETED'], o: 'in' }, { k: 'name', v: 'to-delete', o: 'eq' }] } });
      expect(ids(viaQuery)).toEqual(['to-delete']);
      for (const verb of ['delete', 'update']) {
        const res = await call(verb, owner, { cloud_service_id: cs.cloud_service_id, ...(verb === 'update' && { name: 'again' }) });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('ERROR_RESOURCE_ALREADY_DELETED');
      }
    });
  });

  describe('list, stat, analyze', () => {
    beforeAll(async () => {
      const rows = [
        { name: 'l-a', provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', region_code: 'us-east-1', account: 'A1', instance_type: 't3', project_id: 'p1', ip_addresses: ['10.1.0.1'], data: { power: 'on', cpu: 2 }, tags: { env: 'prod' }, metadata: { ui: 'x' } },
        { name: 'l-b', provider: 'aws', cloud_service_group: 'S3', cloud_service_type: 'Bucket', region_code: 'us-west-2', account: 'A1', instance_type: '', project_id: 'p2', ip_addresses: [], data: { power: 'off', cpu: 4 }, tags: { env: 'dev' } },
        { name: 'l-c', provider: 'google_cloud', cloud_service_group: 'ComputeEngine', cloud_service_type: 'Instance', region_code: 'asia-northeast3', account: 'G1', instance_type: 'e2', project_id: 'p3', ip_addresses: ['10.1.0.3', '34.1.1.1'], data: { power: 'on', cpu: 8 }, tags: { env: 'prod', team: 'data' } },
      ];
      for (const r of rows) await create({ ...r, cloud_service_group: r.cloud_service_group });
      await create({ name: 'l-elsewhere', data: { power: 'on' } }, otherWorkspace);
      await create({ name: 'l-other-domain', data: { power: 'on' }, project_id: 'p1' }, otherDomain);
    });
    const listNames = async (body: object, auth = owner) => {
      const res = await call('list', auth, body);
      expect(res.status).toBe(200);
      return ids(res).filter((n: string) => n.startsWith('l-'));
    };

    it('filters by every field of CloudServiceQuery', async () => {
      const cases: [object, string[]][] = [
        [{ name: 'l-a' }, ['l-a']],
        [{ state: 'ACTIVE', provider: 'aws' }, ['l-a', 'l-b']],
        [{ ip_address: '34.1.1.1' }, ['l-c']],
        [{ ip_address: '10.1.0.1' }, ['l-a']],
        [{ account: 'A1' }, ['l-a', 'l-b']],
        [{ instance_type: 'e2' }, ['l-c']],
        [{ cloud_service_type: 'Instance', provider: 'aws' }, ['l-a']],
        [{ cloud_service_group: 'S3' }, ['l-b']],
        [{ provider: 'google_cloud' }, ['l-c']],
        [{ region_code: 'us-west-2' }, ['l-b']],
        [{ workspace_id: 'ws-1', project_id: 'p3' }, ['l-c']],
        [{ project_id: 'p2' }, ['l-b']],
        [{ project_group_id: 'g1' }, ['l-a', 'l-b']], // g1 and its descendant g2
        [{ project_group_id: 'g2' }, ['l-b']],
        [{ project_group_id: 'g9' }, []], // another workspace's group
        [{ project_group_id: 'g-nope' }, []],
      ];
      for (const [body, expected] of cases) expect([body, await listNames(body)]).toEqual([body, expected]);
      const first = (await call('list', owner, { name: 'l-a' })).body.results[0];
      expect((await call('list', owner, { cloud_service_id: first.cloud_service_id })).body.total_count).toBe(1);
    });

    it('runs the query DSL over data, tags, metadata and the keyword', async () => {
      const q = (query: object) => listNames({ query });
      expect(await q({ filter: [{ k: 'data.power', v: 'on', o: 'eq' }] })).toEqual(['l-a', 'l-c']);
      expect(await q({ filter: [{ k: 'data.cpu', v: 4, o: 'gte' }] })).toEqual(['l-b', 'l-c']);
      expect(await q({ filter: [{ k: 'tags.env', v: 'prod', o: 'eq' }, { k: 'tags.team', v: true, o: 'exists' }] })).toEqual(['l-c']);
      expect(await q({ filter: [{ k: 'metadata.aws.ui', v: 'x', o: 'eq' }] })).toEqual(['l-a']);
      expect(await q({ filter_or: [{ k: 'provider', v: 'google_cloud', o: 'eq' }, { k: 'cloud_service_group', v: 'S3', o: 'eq' }] })).toEqual(['l-b', 'l-c']);
      expect(await q({ filter: [{ k: 'project_group_id', v: 'g2', o: 'not' }, { k: 'name', v: 'l-', o: 'contain' }] })).toEqual(['l-a', 'l-c']);
      expect(await q({ filter: [{ k: 'project_group_id', v: ['g2'], o: 'in' }] })).toEqual(['l-b']);
      expect(await q({ keyword: '34.1.1' })).toEqual(['l-c']);
      expect(await q({ keyword: 'bucket l-a' })).toEqual(['l-a', 'l-b']);
      expect(await q({ filter: [{ k: 'ip_addresses', v: '10.1.0', o: 'contain' }] })).toEqual(['l-a', 'l-c']);
      expect(await q({ filter: [{ k: 'reference.resource_id', v: '', o: 'eq' }, { k: 'name', v: 'l-b', o: 'eq' }] })).toEqual(['l-b']);
    });

    it('sorts, pages, projects and counts', async () => {
      const res = await call('list', owner, {
        query: { filter: [{ k: 'name', v: 'l-', o: 'contain' }], sort: [{ key: 'data.cpu', desc: true }], page: { start: 2, limit: 1 }, only: ['name', 'tags.env'] },
      });
      expect(res.body).toEqual({ results: [{ name: 'l-b', tags: { env: 'dev' }, data: { cpu: 4 } }], total_count: 3 });
      const minimal = await call('list', owner, { name: 'l-a', query: { minimal: true } });
      expect(Object.keys(minimal.body.results[0]).sort()).toEqual(
        ['cloud_service_group', 'cloud_service_id', 'cloud_service_type', 'name', 'project_id', 'provider', 'reference', 'region_code', 'state'].sort(),
      );
      expect((await call('list', owner, { query: { count_only: true, filter: [{ k: 'name', v: 'l-', o: 'contain' }] } })).body).toEqual({ results: [], total_count: 3 });
    });

    it('shows each caller only their domain and workspace', async () => {
      expect(await listNames({}, otherDomain)).toEqual(['l-other-domain']);
      expect(await listNames({ domain_id: 'd2' }, otherDomain)).toEqual(['l-other-domain']);
      expect((await call('list', otherDomain, { domain_id: 'd1' })).status).toBe(403);
      expect(await listNames({}, otherWorkspace)).toEqual(['l-elsewhere']);
      expect(await listNames({}, domainAdmin)).toEqual(['l-a', 'l-b', 'l-c', 'l-elsewhere']);
      expect(await listNames({}, member)).toEqual(['l-b', 'l-c']); // p2 (through g2) and p3, not p1
      expect(await listNames({ workspace_id: 'ws-2' }, owner)).toEqual([]);
    });

    it('refuses bad queries with a 400 naming the key', async () => {
      const bad: [object, string][] = [
        [{ query: { filter: [{ k: 'nope', v: 1, o: 'eq' }] } }, 'query.filter[0].key'],
        [{ query: { filter: [{ k: 'name', v: 1, o: 'bogus' }] } }, 'query.filter[0].operator'],
        [{ query: { filter: [{ k: 'project_group_id', v: 'g1', o: 'contain' }] } }, 'query.filter[0].operator'],
        [{ query: { filter: [{ k: 'project_group_id', v: 'g1', o: 'in' }] } }, 'query.filter[0].value'],
        [{ query: { sort: [{ key: 'name.x' }] } }, 'query.sort[0].key'],
        [{ nope: 1 }, 'nope'],
      ];
      for (const [body, key] of bad) {
        const res = await call('list', owner, body);
        expect(res.status).toBe(400);
        expect(res.body.error.message).toContain(`key = ${key}`);
      }
    });

    it('stat aggregates and distincts within the caller’s scope', async () => {
      const grouped = await call('stat', owner, {
        query: {
          filter: [{ k: 'name', v: 'l-', o: 'contain' }],
          aggregate: [{ group: { keys: [{ key: 'provider', name: 'provider' }], fields: [{ name: 'n', operator: 'count' }] } }, { sort: [{ key: 'provider' }] }],
        },
      });
      expect(grouped.status).toBe(200);
      expect(grouped.body).toEqual({ results: [{ provider: 'aws', n: 2 }, { provider: 'google_cloud', n: 1 }] });
      const distinct = await call('stat', otherDomain, { query: { distinct: 'name' } });
      expect(distinct.body).toEqual({ results: ['l-other-domain'] });
      const tags = await call('stat', owner, { query: { distinct: 'tags.env', filter: [{ k: 'name', v: 'l-', o: 'contain' }] } });
      expect(tags.body.results).toEqual(['dev', 'prod']);
      expect((await call('stat', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      expect((await call('stat', owner, { query: { distinct: 'nope' } })).status).toBe(400);
    });

    it('analyze groups and computes fields within the caller’s scope', async () => {
      const res = await call('analyze', owner, {
        query: {
          group_by: ['provider'],
          filter: [{ k: 'name', v: 'l-', o: 'contain' }],
          fields: { count: { operator: 'count' }, cpu: { key: 'data.cpu', operator: 'sum' } },
          sort: [{ key: 'cpu', desc: true }],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        results: [
          { provider: 'google_cloud', count: 1, cpu: 8 },
          { provider: 'aws', count: 2, cpu: 6 },
        ],
        more: false,
      });
      const paged = await call('analyze', owner, { query: { group_by: ['provider'], filter: [{ k: 'name', v: 'l-', o: 'contain' }], fields: { n: { operator: 'count' } }, sort: [{ key: 'provider' }], page: { limit: 1 } } });
      expect(paged.body).toEqual({ results: [{ provider: 'aws', n: 2 }], more: true });
      const other = await call('analyze', otherDomain, { query: { group_by: ['name'], fields: { n: { operator: 'count' } } } });
      expect(other.body.results).toEqual([{ name: 'l-other-domain', n: 1 }]);
      expect((await call('analyze', owner, { query: {} })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
      expect((await call('analyze', owner, { query: { fields: { n: { key: 'nope', operator: 'sum' } } } })).status).toBe(400);
    });
  });
});
