import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestInventory } from './test-support';

/**
 * Every operation as a client generated from upstream's protos (cloudforet-io/api 2.0.435,
 * inventory/v1/cloud_service.proto) sends it: every field of the request message present, unset ones at
 * their proto3 defaults ("" / 0 / false / [] / {} / the enum's zero value); message fields left unset
 * are omitted, as proto3 JSON does.
 */
const PAGE = { start: 0, limit: 0 };
const QUERY = (over: object = {}) => ({ filter: [], filter_or: [], sort: [], page: PAGE, minimal: false, count_only: false, only: [], keyword: '', lookup: [], add_fields: {}, ...over });
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: PAGE, distinct: '', keyword: '', ...over });
const ANALYZE = (over: object) => ({ group_by: [], field_group: [], filter: [], filter_or: [], page: PAGE, sort: [], fields: {}, select: {}, keyword: '', lookup: [], add_fields: {}, ...over });
/** CreateServiceRequest / UpdateCloudServiceRequest fields at their defaults. */
const UNSET = { name: '', account: '', instance_type: '', instance_size: 0, ip_addresses: [], metadata: {}, tags: {}, region_code: '', project_id: '' };
const LIST = { cloud_service_id: '', name: '', state: '', ip_address: '', account: '', instance_type: '', cloud_service_type: '', cloud_service_group: '', provider: '', region_code: '', workspace_id: '', project_id: '', project_group_id: '' };

describe('inventory: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;
  let web = '';
  let db = '';
  beforeAll(async () => {
    t = await createTestInventory();
    await t.publish('d1', {
      groups: [{ project_group_id: 'g1', workspace_id: 'ws-1', parent_group_id: '' }],
      projects: [
        { project_id: 'p1', workspace_id: 'ws-1', project_group_id: 'g1', name: 'Project One' },
        { project_id: 'p2', workspace_id: 'ws-1', project_group_id: '', name: 'Project Two' },
      ],
    });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(() => t.close());
  const call = (verb: string, body: object) => request(t.app).post(`/inventory/v1/cloud-service/${verb}`).set('Authorization', owner).send(body);
  const ok = async (verb: string, body: object) => {
    const res = await call(verb, body);
    if (res.status !== 200) throw new Error(`${verb}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const list = async (over: object) => (await ok('list', { query: QUERY({ sort: [{ key: 'name', desc: false }] }), ...LIST, ...over })).results.map((r: { name: string }) => r.name);

  test('create: unset fields at their defaults are not set; an unset reference is left out', async () => {
    const a = await ok('create', { cloud_service_type: 'Instance', provider: 'aws', cloud_service_group: 'EC2', ...UNSET, name: 'web', instance_size: 2, ip_addresses: ['10.0.0.1'], data: { cpu: 2 }, project_id: 'p1' });
    web = a.cloud_service_id;
    expect(a).toMatchObject({ name: 'web', instance_size: 2, ip_addresses: ['10.0.0.1'], data: { cpu: 2 }, project_id: 'p1', workspace_id: 'ws-1', account: '', region_code: '', tags: {} });
    const b = await ok('create', {
      cloud_service_type: 'Database', provider: 'aws', cloud_service_group: 'RDS', ...UNSET, name: 'db', account: 'acc-1', data: {}, reference: { resource_id: 'arn:db', external_link: '' }, tags: { env: 'prod' }, region_code: 'us-east-1', project_id: 'p2',
    });
    db = b.cloud_service_id;
    expect(b).toMatchObject({ name: 'db', account: 'acc-1', instance_size: 0, reference: { resource_id: 'arn:db' }, tags: { env: 'prod' }, region_code: 'us-east-1', project_id: 'p2' });
    // required fields stay required: an empty cloud_service_type is a 400
    const empty = await call('create', { cloud_service_type: '', provider: 'aws', cloud_service_group: 'EC2', ...UNSET, data: {} });
    expect([empty.status, empty.body.error.code]).toEqual([400, expect.stringMatching(/^ERROR_(INVALID|REQUIRED)_PARAMETER$/)]);
  });

  test('update: fields at their defaults change nothing; set ones change', async () => {
    const same = await ok('update', { cloud_service_id: db, ...UNSET, data: {} });
    expect(same).toMatchObject({ name: 'db', account: 'acc-1', tags: { env: 'prod' }, region_code: 'us-east-1', project_id: 'p2', reference: { resource_id: 'arn:db' } });
    const changed = await ok('update', { cloud_service_id: db, ...UNSET, name: 'db-1', instance_type: 'db.t3', data: { engine: 'pg' }, project_id: 'p1' });
    expect(changed).toMatchObject({ name: 'db-1', instance_type: 'db.t3', data: { engine: 'pg' }, account: 'acc-1', project_id: 'p1', tags: { env: 'prod' } });
  });

  test('get, list (CloudServiceQuery at its defaults lists all; a set field filters), stat', async () => {
    expect((await ok('get', { cloud_service_id: web })).name).toBe('web');
    expect(await list({})).toEqual(['db-1', 'web']);
    expect(await list({ cloud_service_group: 'RDS' })).toEqual(['db-1']);
    expect(await list({ ip_address: '10.0.0.1' })).toEqual(['web']);
    expect(await list({ project_group_id: 'g1' })).toEqual(['db-1', 'web']);
    expect((await ok('list', { query: QUERY({ count_only: true }), ...LIST })).total_count).toBe(2);
    expect((await ok('stat', { query: STAT({ distinct: 'provider' }) })).results).toEqual(['aws']);
    // protobuf's JSON names, the query's included
    expect((await ok('list', { query: { countOnly: true, filterOr: [] }, cloudServiceGroup: 'RDS' })).total_count).toBe(1);
    expect((await ok('get', { cloudServiceId: web })).cloud_service_id).toBe(web);
    const grouped = await ok('stat', {
      query: STAT({ aggregate: [{ group: { keys: [{ key: 'cloud_service_group', name: 'g', date_format: '' }], fields: [{ key: '', name: 'n', operator: 'count', fields: [], conditions: [] }] } }, { sort: [{ key: 'g', desc: false }] }] }),
    });
    expect(grouped.results).toEqual([
      { g: 'EC2', n: 1 },
      { g: 'RDS', n: 1 },
    ]);
  });

  test('analyze (AnalyzeQuery at its defaults but fields and group_by)', async () => {
    const res = await ok('analyze', { query: ANALYZE({ group_by: ['cloud_service_group'], fields: { size: { key: 'instance_size', operator: 'sum' } }, sort: [{ key: 'cloud_service_group', desc: false }] }) });
    expect(res.results).toEqual([
      { cloud_service_group: 'EC2', size: 2 },
      { cloud_service_group: 'RDS', size: 0 },
    ]);
  });

  test('export: file_format NONE_FILE_FORMAT, title "" and the search query at its defaults', async () => {
    const res = await ok('export', {
      options: [{ name: 'All', title: '', query_type: 'SEARCH', search_query: { filter: [], filter_or: [], keyword: '', sort: [{ key: 'name', desc: false }], fields: ['name', 'cloud_service_group'], page: PAGE } }],
      file_format: 'CSV',
      file_name: '',
      timezone: '',
    });
    const file = await request(t.app).get(new URL(res.download_url).pathname).set('Authorization', owner);
    expect(file.status).toBe(200);
    expect(parse(file.text)).toEqual([
      ['name', 'cloud_service_group'],
      ['db-1', 'RDS'],
      ['web', 'EC2'],
    ]);
    // the zero enum is not set: the default format (Excel)
    const excel = await ok('export', { options: [{ name: 'All', title: '', query_type: 'SEARCH', search_query: { filter: [], filter_or: [], keyword: '', sort: [], fields: ['name'], page: PAGE } }], file_format: 'NONE_FILE_FORMAT', file_name: '', timezone: '' });
    const xlsx = await request(t.app).get(new URL(excel.download_url).pathname).set('Authorization', owner).buffer(true);
    expect([xlsx.status, xlsx.headers['content-type']]).toEqual([200, expect.stringContaining('spreadsheetml')]);
  });

  test('delete', async () => {
    await ok('delete', { cloud_service_id: web });
    expect(await list({})).toEqual(['db-1']);
  });
});
