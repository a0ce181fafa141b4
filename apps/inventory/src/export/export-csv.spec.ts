import JSZip from 'jszip';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestInventory } from '../test-support';

/**
 * CSV exports are written by PostgreSQL (COPY, see export/csv-sql.ts) unless a field needs Node (a
 * project name): the same fields over the same records give the same bytes both ways.
 */

const binary = (res: request.Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
};

const NAMES = ['plain', 'a,b', 'say "hi"', 'line1\nline2', 'cr\rlf', '  ', '', '한글 😀', '\u00a0', ' lead', '\\.', "it's", '-5', '[x'];
const VALUES: unknown[] = ['on', ' ', '', 7, 1.5, 1e21, 1e-7, true, null, {}, { a: 1, b: [2] }, [], ['x', '', null, 'y,z'], [1, [2]], '12', 'x\u0001y'];
const IPS: string[][] = [[], ['10.0.0.1'], ['10.0.0.1', '52.0.0.1'], ['', 'a'], [' ', 'b'], ['x,y', 'q"r']];

describe('inventory cloud-service export: CSV written by PostgreSQL', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;

  beforeAll(async () => {
    t = await createTestInventory();
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    const n = NAMES.length * 3;
    for (let i = 0; i < n; i++) {
      await t.deps.pool.query(
        `INSERT INTO cloud_service (domain_id, cloud_service_id, workspace_id, project_id, name, provider, cloud_service_group, cloud_service_type,
           ref_cloud_service_type, instance_size, ip_addresses, data, tags, created_at, updated_at, launched_at)
         VALUES ('d1', $1, 'ws-1', 'p1', $2, 'aws', 'Compute', 'Instance', 'x', $3, $4, $5, $6, $7, now(), $8)`,
        [
          `cs-${String(i).padStart(3, '0')}`, NAMES[i % NAMES.length], [0, 1.5, 1e15, 2.5e-5, 1024][i % 5], IPS[i % IPS.length],
          JSON.stringify({ v: VALUES[i % VALUES.length], deep: { w: VALUES[(i + 3) % VALUES.length] } }), JSON.stringify({ env: NAMES[(i + 1) % NAMES.length] }),
          // around the 2024-03-10 daylight saving change in New York
          new Date(Date.UTC(2024, 2, 10, 5) + i * 20 * 60_000).toISOString(), i % 4 === 0 ? null : '2024-11-03T05:30:00Z',
        ],
      );
    }
  });
  afterAll(() => t.close());

  const fields = [
    'cloud_service_id', 'name', { key: 'instance_size', name: 'Size' }, 'ip_addresses', 'data.v', { key: 'data.deep.w', name: 'Deep', options: { default: '-', prefix: '<', postfix: '>' } },
    'tags.env', { key: 'created_at', name: 'Created' }, { key: 'launched_at', name: 'Launched', options: { default: 'never' } },
  ];
  const option = { name: 'Cloud services', query_type: 'SEARCH', search_query: { fields, sort: [{ key: 'cloud_service_id' }] } };

  const exportFile = async (body: object) => {
    const res = await request(t.app).post('/inventory/v1/cloud-service/export').set('Authorization', owner).send(body);
    expect(res.status).toBe(200);
    const file = await request(t.app).get(new URL(res.body.download_url).pathname).buffer(true).parse(binary);
    expect(file.status).toBe(200);
    return file.body as Buffer;
  };
  /** The same export formatted by Node: a project-name field sends every row through Node; its column is then removed. */
  const byNode = async (body: { options: (typeof option)[] } & object) => {
    const withProject = { ...body, options: body.options.map((o) => ({ ...o, search_query: { ...o.search_query, fields: [...o.search_query.fields, { key: 'project_id', name: 'Project', reference: { resource_type: 'identity.Project' } }] } })) };
    return (await exportFile(withProject)).toString('utf8').replace(',Project\r\n', '\r\n').replace(/,p1\r\n/g, '\r\n');
  };

  it('writes the bytes Node writes: RFC 4180 quoting, CRLF, blanks, defaults, lists, JSON, numbers, time zones', async () => {
    // `data` whole: an object, which Node formats (JSON.stringify), in every row.
    const withData = { ...option, search_query: { ...option.search_query, fields: [...fields, 'data'] } };
    for (const [timezone, o] of [['UTC', option], ['America/New_York', option], ['UTC', withData]] as const) {
      const body = { file_format: 'CSV', timezone, options: [o] };
      const csv = (await exportFile(body)).toString('utf8');
      expect(csv).toBe(await byNode(body));
      const rows: string[][] = parse(csv);
      expect(rows).toHaveLength(NAMES.length * 3 + 1);
      expect(csv.endsWith('\r\n')).toBe(true);
    }
  });

  it('writes timestamps in the requested time zone', async () => {
    const rows: string[][] = parse(await exportFile({ file_format: 'CSV', timezone: 'America/New_York', options: [option] }));
    const created = rows.slice(1).map((r) => r[7]);
    // 05:00Z + 20 min steps: 00:00 EST ... 01:40 EST, then 03:00 EDT (07:00Z)
    expect(created.slice(0, 7)).toEqual(['2024-03-10 00:00:00', '2024-03-10 00:20:00', '2024-03-10 00:40:00', '2024-03-10 01:00:00', '2024-03-10 01:20:00', '2024-03-10 01:40:00', '2024-03-10 03:00:00']);
    expect(rows[1][8]).toBe('never');
    expect(rows[2][8]).toBe('2024-11-03 01:30:00');
  });

  it('writes several options as CSV files in a ZIP the same way', async () => {
    const zipped = await exportFile({ file_format: 'CSV', options: [option, { ...option, name: 'Again', search_query: { ...option.search_query, filter: [{ k: 'data.v', v: 7, o: 'eq' }] } }] });
    const zip = await JSZip.loadAsync(zipped);
    const all = await exportFile({ file_format: 'CSV', options: [option] });
    expect(await zip.file('Cloudservices.csv')!.async('nodebuffer')).toEqual(all);
    const again: string[][] = parse(await zip.file('Again.csv')!.async('string'));
    expect(again.slice(1).map((r) => r[4])).toEqual(['7', '7', '7']);
  });
});
