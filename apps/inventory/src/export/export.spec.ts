import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestInventory } from '../test-support';

const ROWS = 3000;

/** supertest: the body as raw bytes, whatever the content type. */
const binary = (res: request.Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
};

describe('inventory cloud-service export', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;
  let domainAdmin: string;
  let otherDomain: string;

  beforeAll(async () => {
    t = await createTestInventory();
    await t.publish('d1', {
      groups: [{ project_group_id: 'g1', workspace_id: 'ws-1', parent_group_id: '' }],
      projects: [
        { project_id: 'p1', workspace_id: 'ws-1', project_group_id: 'g1', name: 'Project "One", Ltd' },
        { project_id: 'p2', workspace_id: 'ws-1', project_group_id: '', name: 'Project Two' },
      ],
    });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    domainAdmin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    // A few thousand records straight into the table; row i was created at 2024-01-01T00:00:00Z + i minutes.
    await t.deps.pool.query(
      `INSERT INTO cloud_service (domain_id, cloud_service_id, workspace_id, project_id, name, provider, cloud_service_group,
         cloud_service_type, ref_cloud_service_type, region_code, instance_size, ip_addresses, data, tags, created_at, updated_at)
       SELECT 'd1', 'cloud-svc-' || lpad(i::text, 6, '0'), 'ws-1', CASE WHEN i % 2 = 0 THEN 'p1' ELSE 'p2' END,
         'vm, "' || i || '"', CASE WHEN i % 3 = 0 THEN 'google_cloud' ELSE 'aws' END, 'Compute', 'Instance', 'x.Compute.Instance',
         'region-' || (i % 4), i * 1024, ARRAY['10.0.' || (i % 250) || '.1', '52.0.0.' || (i % 250)],
         jsonb_build_object('power', CASE WHEN i % 2 = 0 THEN 'on' ELSE 'off' END, 'disk', jsonb_build_object('gb', i), 'note', CASE WHEN i % 5 = 0 THEN 'line1' || chr(10) || 'line2' ELSE '' END),
         jsonb_build_object('env', CASE WHEN i % 2 = 0 THEN 'prod' ELSE 'dev' END),
         timestamptz '2024-01-01T00:00:00Z' + i * interval '1 minute', now()
       FROM generate_series(1, $1) i`,
      [ROWS],
    );
    await t.deps.pool.query(
      `INSERT INTO cloud_service (domain_id, cloud_service_id, workspace_id, name, provider, cloud_service_group, cloud_service_type, ref_cloud_service_type)
       VALUES ('d2', 'cloud-svc-d2', 'ws-1', 'secret', 'aws', 'Compute', 'Instance', 'x')`,
    );
  });
  afterAll(() => t.close());

  const exportCall = (body: object, auth = owner) => request(t.app).post('/inventory/v1/cloud-service/export').set('Authorization', auth).send(body);
  const download = async (url: string, auth?: string) => {
    const path = new URL(url).pathname;
    const req = request(t.app).get(path).buffer(true).parse(binary);
    if (auth) req.set('Authorization', auth);
    return req;
  };
  const search = (extra: object = {}) => ({
    name: 'Cloud Services',
    query_type: 'SEARCH',
    search_query: {
      fields: [
        'cloud_service_id',
        { key: 'name', name: 'Name' },
        { key: 'created_at', name: 'Created' },
        { key: 'data.disk.gb', name: 'Disk', options: { postfix: ' GB' } },
        { key: 'instance_size', name: 'Size', type: 'size' },
        { key: 'ip_addresses', name: 'IP' },
        { key: 'data.note', name: 'Note', options: { default: '-' } },
        { key: 'project_id', name: 'Project', reference: { resource_type: 'identity.Project' } },
        { key: 'tags.env', name: 'Env' },
      ],
      sort: [{ key: 'cloud_service_id' }],
      ...extra,
    },
  });

  it('exports thousands of rows to CSV, read back with a real CSV parser', async () => {
    const res = await exportCall({ options: [search()], file_format: 'CSV', timezone: 'Asia/Seoul' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['download_url']);
    expect(res.body.download_url).toMatch(/^http:\/\/gateway\.test\/inventory\/v1\/cloud-service\/export\/download\/[A-Za-z0-9_-]{40,}$/);
    const file = await download(res.body.download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="cloud_service_export_\d{8}\.csv"/);
    const rows: string[][] = parse(file.body);
    expect(rows[0]).toEqual(['cloud_service_id', 'Name', 'Created', 'Disk', 'Size', 'IP', 'Note', 'Project', 'Env']);
    expect(rows).toHaveLength(ROWS + 1);
    // row 10: created 2024-01-01T00:10:00Z, shown in Seoul time (UTC+9)
    expect(rows[10]).toEqual([
      'cloud-svc-000010',
      'vm, "10"',
      '2024-01-01 09:10:00',
      '10 GB',
      '10 KB',
      '10.0.10.1\n52.0.0.10',
      'line1\nline2',
      'Project "One", Ltd',
      'prod',
    ]);
    expect(rows[1][6]).toBe("'-"); // the default '-': a text beginning with '-' gets the formula guard's quote (export-formula.spec.ts)
    expect(rows[1][7]).toBe('Project Two');
    expect(rows.slice(1).map((r) => r[0])).toEqual([...rows.slice(1).map((r) => r[0])].sort());
    expect(rows.some((r) => r.includes('secret'))).toBe(false);
  });

  it('exports several options to one Excel workbook, one sheet each, read back with exceljs', async () => {
    const res = await exportCall({
      file_name: 'inventory',
      options: [
        { ...search({ filter: [{ k: 'provider', v: 'aws', o: 'eq' }] }), title: 'AWS machines' },
        {
          name: 'By provider',
          query_type: 'ANALYZE',
          analyze_query: { group_by: ['provider'], fields: { count: { operator: 'count' }, disk: { key: 'data.disk.gb', operator: 'sum' } }, sort: [{ key: 'provider' }] },
        },
        { name: 'Cloud Services', query_type: 'SEARCH', search_query: { fields: ['name'], filter: [{ k: 'data.power', v: 'on', o: 'eq' }], page: { limit: 7 } } },
        { name: 'Empty', query_type: 'SEARCH', search_query: { fields: ['name'], filter: [{ k: 'name', v: 'nothing', o: 'eq' }] } },
      ],
    });
    expect(res.status).toBe(200);
    const file = await download(res.body.download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(file.headers['content-disposition']).toMatch(/filename="inventory_\d{8}\.xlsx"/);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file.body as unknown as ArrayBuffer);
    // upstream's sheet names: spaces removed, repeats numbered; options without rows get no sheet
    expect(wb.worksheets.map((w) => w.name)).toEqual(['CloudServices', 'Byprovider', 'CloudServices2']);
    const [machines, byProvider, limited] = wb.worksheets;
    expect(machines.getRow(1).getCell(1).value).toBe('AWS machines');
    expect(machines.getRow(2).values).toEqual([undefined, 'cloud_service_id', 'Name', 'Created', 'Disk', 'Size', 'IP', 'Note', 'Project', 'Env']);
    const awsCount = ROWS - Math.floor(ROWS / 3);
    expect(machines.actualRowCount).toBe(awsCount + 2);
    expect(machines.getRow(3).getCell(3).value).toBe('2024-01-01 00:01:00');
    expect(byProvider.getRow(1).values).toEqual([undefined, 'provider', 'count', 'disk']);
    const sum = (pred: (i: number) => boolean) => Array.from({ length: ROWS }, (_, i) => i + 1).filter(pred).reduce((a, b) => a + b, 0);
    expect(byProvider.getRow(2).values).toEqual([undefined, 'aws', String(awsCount), String(sum((i) => i % 3 !== 0))]);
    expect(byProvider.getRow(3).values).toEqual([undefined, 'google_cloud', String(ROWS - awsCount), String(sum((i) => i % 3 === 0))]);
    expect(limited.actualRowCount).toBe(8);
  });

  it('exports several options as CSV files in one ZIP archive', async () => {
    const res = await exportCall({
      file_format: 'CSV',
      options: [search(), { name: 'Per region', query_type: 'ANALYZE', analyze_query: { group_by: ['region_code'], fields: { n: { operator: 'count' } }, sort: [{ key: 'region_code' }] } }],
    });
    const file = await download(res.body.download_url);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(file.headers['content-disposition']).toMatch(/filename="cloud_service_export_\d{8}\.zip"/);
    const zip = await JSZip.loadAsync(file.body);
    expect(Object.keys(zip.files)).toEqual(['CloudServices.csv', 'Perregion.csv']);
    const services: string[][] = parse(await zip.file('CloudServices.csv')!.async('string'));
    expect(services).toHaveLength(ROWS + 1);
    expect(services[1][2]).toBe('2024-01-01 00:01:00'); // UTC by default
    const regions: string[][] = parse(await zip.file('Perregion.csv')!.async('string'));
    expect(regions).toEqual([['region_code', 'n'], ['region-0', '750'], ['region-1', '750'], ['region-2', '750'], ['region-3', '750']]);
  });

  it('applies the scope, the default ACTIVE state, keyword, unwind and project_group_id', async () => {
    await t.deps.pool.query(`UPDATE cloud_service SET state = 'DELETED' WHERE domain_id = 'd1' AND cloud_service_id = 'cloud-svc-000002'`);
    const res = await exportCall({
      file_format: 'CSV',
      options: [
        {
          name: 'x',
          query_type: 'SEARCH',
          search_query: {
            fields: ['cloud_service_id', 'ip_addresses'],
            keyword: 'cloud-svc-00000',
            filter: [{ k: 'project_group_id', v: 'g1', o: 'eq' }],
            unwind: { path: 'ip_addresses' },
            sort: [{ key: 'cloud_service_id' }, { key: 'ip_addresses' }],
          },
        },
      ],
    });
    const rows: string[][] = parse((await download(res.body.download_url)).body);
    // ids 1..9 in p1 (even) and active: 4, 6, 8; each row unwound into its two addresses
    expect(rows.slice(1)).toEqual([
      ['cloud-svc-000004', '10.0.4.1'],
      ['cloud-svc-000004', '52.0.0.4'],
      ['cloud-svc-000006', '10.0.6.1'],
      ['cloud-svc-000006', '52.0.0.6'],
      ['cloud-svc-000008', '10.0.8.1'],
      ['cloud-svc-000008', '52.0.0.8'],
    ]);
    await t.deps.pool.query(`UPDATE cloud_service SET state = 'ACTIVE' WHERE cloud_service_id = 'cloud-svc-000002'`);
  });

  it('binds the download URL to the domain and expires it', async () => {
    const res = await exportCall({ file_format: 'CSV', options: [search({ page: { limit: 3 } })] }, domainAdmin);
    expect(res.status).toBe(200);
    const url = res.body.download_url;
    expect((await download(url, owner)).status).toBe(200);
    const foreign = await download(url, otherDomain);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.body.toString()).error.code).toBe('ERROR_NOT_FOUND');
    expect((await download(url, 'Bearer forged')).status).toBe(401);
    const token = new URL(url).pathname.split('/').pop()!;
    expect((await download(url.replace(token, `${token.slice(0, -2)}xx`))).status).toBe(404);
    await t.deps.pool.query(`UPDATE cloud_service_export SET expires_at = now() - interval '1 second'`);
    expect((await download(url)).status).toBe(404);
    // another domain exporting the same thing gets only its own data
    const other = await exportCall({ file_format: 'CSV', options: [search()] }, otherDomain);
    const rows: string[][] = parse((await download(other.body.download_url)).body);
    expect(rows.slice(1).map((r) => r[1])).toEqual(['secret']);
  });

  it('lets go of the database when the client goes away mid-download', async () => {
    // ~20 MB of CSV: far more than the socket buffers hold, so the writer must wait for the client.
    const fields = Array.from({ length: 400 }, () => 'cloud_service_id');
    const res = await exportCall({ file_format: 'CSV', options: [{ name: 'big', query_type: 'SEARCH', search_query: { fields } }] });
    const server = t.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: new URL(res.body.download_url).pathname }, (r) => {
        expect(r.statusCode).toBe(200);
        r.on('data', (c: Buffer) => {
          received += c.length;
          if (received > 1_000_000) {
            req.destroy();
            resolve();
          }
        });
        r.on('end', () => reject(new Error('the whole file arrived')));
      });
      req.on('error', () => {});
    });
    expect(received).toBeLessThan(10_000_000);
    // the cursor's transaction ends and its connection returns to the pool
    for (let i = 0; i < 50 && t.deps.pool.totalCount !== t.deps.pool.idleCount; i++) await new Promise((r) => setTimeout(r, 100));
    expect(t.deps.pool.totalCount).toBe(t.deps.pool.idleCount);
    const { rows } = await t.deps.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`);
    expect(rows[0].n).toBe(0);
    server.close();
    // and the URL still works until it expires
    const again = await download(res.body.download_url);
    expect(again.status).toBe(200);
    expect(again.body.length).toBeGreaterThan(10_000_000);
  });

  it('refuses bad requests with upstream’s errors', async () => {
    const cases: [object, number, string, string?][] = [
      [{}, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options'],
      [{ options: [] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options'],
      [{ options: [search()], timezone: 'Mars/Base' }, 400, 'ERROR_INVALID_PARAMETER', 'key = timezone'],
      [{ options: [search()], timezone: '+09:00' }, 400, 'ERROR_INVALID_PARAMETER', 'key = timezone'],
      [{ options: [search()], file_format: 'PDF' }, 400, 'ERROR_INVALID_PARAMETER', 'key = file_format'],
      [{ options: [{ name: 'x', query_type: 'SEARCH' }] }, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options[0].search_query'],
      [{ options: [{ name: 'x', query_type: 'ANALYZE' }] }, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options[0].analyze_query'],
      // an empty message is not set (proto3): the search query is missing
      [{ options: [{ name: 'x', query_type: 'SEARCH', search_query: {} }] }, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options[0].search_query'],
      [{ options: [{ name: 'x', query_type: 'SEARCH', search_query: { keyword: 'a' } }] }, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options[0].search_query.fields'],
      [{ options: [{ name: 'x', query_type: 'LIST', search_query: { fields: ['name'] } }] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options[0].query_type'],
      [{ options: [{ query_type: 'SEARCH', search_query: { fields: ['name'] } }] }, 400, 'ERROR_REQUIRED_PARAMETER', 'key = options[0].name'],
      [{ options: [{ name: 'x', query_type: 'SEARCH', search_query: { fields: ['nope'] } }] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options[0].search_query.fields[0]'],
      [{ options: [{ name: 'x', query_type: 'SEARCH', search_query: { fields: ['name.x'] } }] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options[0].search_query.fields[0]'],
      [{ options: [search({ filter: [{ k: 'nope', v: 1, o: 'eq' }] })] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options[0].search_query.filter[0].key'],
      [{ options: [{ name: 'a', query_type: 'ANALYZE', analyze_query: { fields: { n: { key: 'nope', operator: 'sum' } } } }] }, 400, 'ERROR_INVALID_PARAMETER', 'options[0].analyze_query'],
      [{ options: [search({ bogus: 1 })] }, 400, 'ERROR_INVALID_PARAMETER', 'key = options[0].search_query.bogus'],
      [{ options: [search({ filter: [{ k: 'name', v: 'nothing', o: 'eq' }] })] }, 400, 'ERROR_NO_DATA_TO_EXPORT'],
    ];
    for (const [body, status, code, message] of cases) {
      const res = await exportCall(body);
      expect([body, res.status, res.body.error?.code]).toEqual([body, status, code]);
      if (message) expect(res.body.error.message).toContain(message);
    }
    expect((await request(t.app).post('/inventory/v1/cloud-service/export').send({ options: [search()] })).status).toBe(401);
    const noRead = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', permissions: ['inventory:CloudService.write'] });
    expect((await exportCall({ options: [search()] }, noRead)).status).toBe(403);
    // another domain with no data of its own
    const empty = await bearer({ domainId: 'd3', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    expect((await exportCall({ options: [search()] }, empty)).body.error.code).toBe('ERROR_NO_DATA_TO_EXPORT');
    expect((await request(t.app).get('/inventory/v1/cloud-service/export/download/nope')).status).toBe(404);
  });
});
