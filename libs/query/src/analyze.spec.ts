import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { compileAnalyze, defineResource, parseAnalyzeQuery, parseTimeSeriesAnalyzeQuery, runAnalyze } from './index';
import { D1, insertRows, resource, ROWS, TABLE_DDL } from './test/fixture';
import { expect400 } from './test/helpers';

let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'query_analyze' });
  await db.pool.query(TABLE_DDL);
  await insertRows(db.pool, ROWS);
});
afterAll(() => db?.drop());

const analyze = (q: unknown) => runAnalyze(db.pool, resource, parseTimeSeriesAnalyzeQuery(q), D1);
const fields = { cost: { key: 'cost', operator: 'sum' }, n: { operator: 'count' } };
const round = (rows: Record<string, unknown>[]) =>
  JSON.parse(JSON.stringify(rows, (_, v) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v)));

test('group_by, fields, sort, page and more', async () => {
  const q = { group_by: ['provider'], fields, sort: [{ key: 'cost', desc: true }] };
  expect(round((await analyze(q)).results)).toEqual([
    { provider: 'google_cloud', cost: 300, n: 1 },
    { provider: 'aws', cost: 228.6, n: 3 },
    { provider: 'azure', cost: 0, n: 1 },
  ]);
  expect((await analyze(q)).more).toBe(false);
  expect(await analyze({ ...q, page: { limit: 2 } })).toMatchObject({ more: true, results: [{ provider: 'google_cloud' }, { provider: 'aws' }] });
  expect(await analyze({ ...q, page: { limit: 3 } })).toMatchObject({ more: false });
  expect(await analyze({ ...q, page: { start: 3, limit: 1 } })).toEqual({ more: false, results: [{ provider: 'azure', cost: 0, n: 1 }] });
  expect(await analyze({ ...q, page: { start: 2, limit: 1 } })).toMatchObject({ more: true, results: [{ provider: 'aws' }] });
});

test('AnalyzeQuery: group_by {key, name}, dotted keys, filter and keyword', async () => {
  const r = await runAnalyze(
    db.pool,
    resource,
    parseAnalyzeQuery({
      group_by: [{ key: 'tags.team', name: 'team' }, 'data.power_state'],
      fields: { n: { operator: 'count' }, names: { operator: 'push', key: 'name' }, rows: { operator: 'push', fields: { id: 'cloud_service_id' } } },
      filter: [{ k: 'provider', v: 'aws', o: 'eq' }],
      keyword: 'web',
      sort: [{ key: 'power_state' }],
    }),
    D1,
  );
  expect(r.results).toEqual([
    { team: 'web', power_state: 'RUNNING', n: 1, names: ['web-server-01'], rows: [{ id: 'cs-1' }] },
    { team: 'web', power_state: 'STOPPED', n: 1, names: ['Web-Server-02'], rows: [{ id: 'cs-2' }] },
  ]);
});

test('time series: MONTHLY date key from the resource date field (datetime)', async () => {
  const r = await analyze({ group_by: ['provider'], granularity: 'MONTHLY', fields, sort: [{ key: 'provider' }, { key: 'date' }] });
  expect(round(r.results)).toEqual([
    { provider: 'aws', date: '2024-01', cost: 218.6, n: 2 },
    { provider: 'aws', date: '2024-03', cost: 10, n: 1 },
    { provider: 'azure', date: '2024-02', cost: 0, n: 1 },
    { provider: 'google_cloud', date: '2024-02', cost: 300, n: 1 },
  ]);
  const daily = await analyze({ granularity: 'DAILY', fields: { n: { operator: 'count' } }, sort: [{ key: 'date' }], page: { limit: 2 } });
  expect(daily).toEqual({ results: [{ date: '2024-01-05', n: 1 }, { date: '2024-01-20', n: 1 }], more: true });
  const yearly = await analyze({ granularity: 'YEARLY', fields: { n: { operator: 'count' } } });
  expect(yearly.results).toEqual([{ date: '2024', n: 5 }]);
});

test('field_group: the upstream date-bucket layout, sort by total', async () => {
  const r = await analyze({
    group_by: ['provider'],
    granularity: 'MONTHLY',
    fields: { cost_sum: { key: 'cost', operator: 'sum' }, last_name: { key: 'name', operator: 'last' } },
    field_group: ['date'],
    sort: [{ key: 'cost_sum', desc: true }],
  });
  expect(round(r.results)).toEqual([
    { provider: 'google_cloud', _total_cost_sum: 300, cost_sum: [{ value: 300, date: '2024-02' }], last_name: [{ value: 'db-main', date: '2024-02' }] },
    {
      provider: 'aws',
      _total_cost_sum: 228.6,
      cost_sum: [{ value: 218.6, date: '2024-01' }, { value: 10, date: '2024-03' }],
      last_name: [{ value: 'Web-Server-02', date: '2024-01' }, { value: 'cache_50%', date: '2024-03' }],
    },
    { provider: 'azure', _total_cost_sum: 0, cost_sum: [{ value: 0, date: '2024-02' }], last_name: [{ value: null, date: '2024-02' }] },
  ]);
  expect(r.more).toBe(false);
});

test('start and end (inclusive at their own precision)', async () => {
  const ids = async (start?: string, end?: string, date_field?: string) =>
    (await analyze({ group_by: ['cloud_service_id'], fields: { n: { operator: 'count' } }, start, end, date_field, sort: [{ key: 'cloud_service_id' }] })).results.map(
      (x) => x.cloud_service_id,
    );
  expect(await ids('2024-02', '2024-02')).toEqual(['cs-3', 'cs-4']);
  expect(await ids(undefined, '2024-01-20')).toEqual(['cs-1', 'cs-2']);
  expect(await ids('2024-01-20')).toEqual(['cs-2', 'cs-3', 'cs-4', 'cs-5']);
  expect(await ids('2025')).toEqual([]);
  expect(await ids('2024', '2024')).toEqual(['cs-1', 'cs-2', 'cs-3', 'cs-4', 'cs-5']);
  // a YYYY-MM string field compares at its own precision (upstream formats start/end with the field's format)
  expect(await ids('2024-01-15', '2024-02', 'billed_month')).toEqual(['cs-1', 'cs-2', 'cs-3', 'cs-4']);
  expect(await ids('2024-03', undefined, 'billed_month')).toEqual(['cs-5']);
});

test('string date fields: buckets at their precision; finer granularity refused', async () => {
  const r = await analyze({ date_field: 'billed_month', granularity: 'MONTHLY', fields: { n: { operator: 'count' } }, sort: [{ key: 'date' }] });
  expect(r.results).toEqual([{ date: '2024-01', n: 2 }, { date: '2024-02', n: 2 }, { date: '2024-03', n: 1 }]);
  expect((await analyze({ date_field: 'billed_month', granularity: 'YEARLY', fields: { n: { operator: 'count' } } })).results).toEqual([{ date: '2024', n: 5 }]);
  await expect400(analyze({ date_field: 'billed_month', granularity: 'DAILY', fields: { n: { operator: 'count' } } }), 'query.granularity');
});

test('select: arithmetic over fields; group keys kept only when selected', async () => {
  const q = { group_by: ['provider'], fields, sort: [{ key: 'avg', desc: true }] };
  const r = await analyze({ ...q, select: { provider: 'provider', avg: { operator: 'divide', fields: ['cost', 'n'] }, twice: { operator: 'multiply', fields: ['n', 2] } } });
  expect(round(r.results)).toEqual([
    { provider: 'google_cloud', avg: 300, twice: 2 },
    { provider: 'aws', avg: 76.2, twice: 6 },
    { provider: 'azure', avg: 0, twice: 2 },
  ]);
  const bare = await analyze({ ...q, select: { avg: { operator: 'divide', fields: ['cost', 'n'] } } });
  expect(round(bare.results)).toEqual([{ avg: 300 }, { avg: 76.2 }, { avg: 0 }]);
});

test('one statement, every value a bind parameter', () => {
  const c = compileAnalyze(resource, parseTimeSeriesAnalyzeQuery({ group_by: ['tags.x"y'], granularity: 'MONTHLY', start: '2024-01', fields: { 'a"b': { key: 'cost', operator: 'sum' } } }), D1);
  expect(c.text.startsWith('WITH ')).toBe(true);
  expect(c.text).not.toContain('x"y');
  expect(c.text).not.toContain('a"b');
});

describe('errors', () => {
  test.each([
    [{ fields: {} }, 'query.fields', 'ERROR_REQUIRED_PARAMETER'],
    [{ fields: { x: { operator: 'median', key: 'cost' } } }, 'query.fields.x.operator'],
    [{ fields: { x: { operator: 'sum' } } }, 'query.fields.x.key', 'ERROR_REQUIRED_PARAMETER'],
    [{ fields: { x: { operator: 'push' } } }, 'query.fields.x.fields', 'ERROR_REQUIRED_PARAMETER'],
    [{ fields, field_group: ['_total_x'] }, 'query.field_group'],
    [{ fields, start: '2024-13' }, 'query.start', 'ERROR_INVALID_PARAMETER_TYPE'],
    [{ fields, end: 'yesterday' }, 'query.end', 'ERROR_INVALID_PARAMETER_TYPE'],
    [{ fields, granularity: 'MONTHLY', date_field: 'nope' }, 'query.date_field'],
    [{ fields, granularity: 'MONTHLY', date_field: 'cost' }, 'query.date_field'],
    [{ fields, group_by: ['nope'] }, 'query.group_by[0].key'],
    [{ fields, sort: [{ key: 'nope' }] }, 'query.sort[0].key'],
    [{ fields, select: { x: { operator: 'pow', fields: ['n'] } } }, 'query.select.x.operator'],
    [{ fields, select: { x: { operator: 'add' } } }, 'query.select.x.fields', 'ERROR_REQUIRED_PARAMETER'],
    [{ fields, filter: [{ k: 'cost', v: 'x', o: 'gt' }] }, 'query.filter[0].value'],
  ])('%j -> %s', async (q, key, code = 'ERROR_INVALID_PARAMETER') => {
    await expect400(() => analyze(q), key, code);
  });
  test('schema: fields is required; granularity is an enum', async () => {
    await expect400(() => parseAnalyzeQuery({ group_by: ['provider'] }), 'query.fields', 'ERROR_REQUIRED_PARAMETER');
    await expect400(() => parseTimeSeriesAnalyzeQuery({ fields, granularity: 'HOURLY' }), 'query.granularity');
  });
  test('a time series needs a date field', async () => {
    const noDate = defineResource({ ...resource.spec, dateKey: undefined });
    await expect400(() => runAnalyze(db.pool, noDate, parseTimeSeriesAnalyzeQuery({ fields, granularity: 'DAILY' }), D1), 'query.granularity');
  });
});

test('unwind: each element of an array becomes a row after the filter and before grouping', async () => {
  const q = {
    unwind: { path: 'disks' },
    group_by: [{ key: 'disks.type', name: 'type' }],
    fields: { size: { key: 'disks.size', operator: 'sum' }, n: { operator: 'count' } },
    sort: [{ key: 'type' }],
  };
  expect((await analyze(q)).results).toEqual([
    { type: 'gp2', size: 30, n: 2 },
    { type: 'gp3', size: 5, n: 1 },
    { type: 'io1', size: 100, n: 1 },
  ]);
  // unwind.filter keeps the matching elements; the query's filter still applies to the rows first
  const filtered = await analyze({ ...q, unwind: { path: 'disks', filter: [{ k: 'disks.size', v: 10, o: 'gt' }] } });
  expect(filtered.results).toEqual([
    { type: 'gp2', size: 20, n: 1 },
    { type: 'io1', size: 100, n: 1 },
  ]);
  const aws = await analyze({ ...q, filter: [{ k: 'cloud_service_id', v: 'cs-5', o: 'eq' }] });
  expect(aws.results).toEqual([{ type: 'gp3', size: 5, n: 1 }]);
  await expect400(() => analyze({ ...q, unwind: { path: 'nope' } }), 'query.unwind.path');
});

describe('unknown and unsupported keys inside a query', () => {
  it.each([
    [{ fields, filtr: [] }, 'query.filtr', 'unknown field'],
    [{ fields, page: { limt: 1 } }, 'query.page.limt', 'unknown field'],
    [{ fields, filter: [{ k: 'provider', v: 'aws', o: 'eq', x: 1 }] }, 'query.filter[0].x', 'unknown field'],
    [{ fields, unwind: { path: 'disks', filters: [] } }, 'query.unwind.filters', 'unknown field'],
    [{ fields: { cost: { key: 'cost', operator: 'sum', opertor: 'x' } } }, 'query.fields.cost.opertor', 'unknown field'],
    [{ fields, group_by: [{ key: 'provider', nme: 'p' }] }, 'query.group_by[0].nme', 'unknown field'],
    [{ fields, select: { c: { operator: 'add', fields: ['cost', 1], x: 1 } } }, 'query.select.c.x', 'unknown field'],
    [{ fields, lookup: [{ from: 'x' }] }, 'query.lookup', 'not supported'],
    [{ fields, add_fields: { a: 1 } }, 'query.add_fields', 'not supported'],
  ])('%j -> 400 on %s', async (q, key, reason) => {
    await expect400(() => analyze(q), key);
    expect(() => parseTimeSeriesAnalyzeQuery(q)).toThrow(reason);
  });

  it('accepts the unsupported keys empty, as a proto3 client sends them', async () => {
    const r = await analyze({ fields: { n: { operator: 'count' } }, lookup: [], add_fields: {} });
    expect(r.results).toEqual([{ n: 5 }]);
    expect(parseAnalyzeQuery({ fields, lookup: null, add_fields: null })).toMatchObject({ fields });
  });
});

describe('time buckets of a text date field', () => {
  const months = defineResource({
    table: 'costs',
    idKey: 'id',
    keywordKeys: [],
    dateKey: 'billed_month',
    fields: { id: { column: 'id', type: 'string' }, billed_month: { column: 'billed_month', type: 'string', dateFormat: 'YYYY-MM' }, n: { column: 'n', type: 'number' } },
  });
  const compile = (granularity: string) =>
    compileAnalyze(months, parseTimeSeriesAnalyzeQuery({ granularity, start: '2024-01', end: '2024-12', fields: { n: { key: 'n', operator: 'sum' } } }), []).text;

  it('groups on the column itself when it is stored in the bucket\'s format, and on its prefix for a coarser bucket', () => {
    expect(compile('MONTHLY')).not.toContain('left(');
    expect(compile('MONTHLY')).toMatch(/"billed_month" AS __qg/);
    expect(compile('YEARLY')).toContain('left(s0."billed_month", 4)');
  });
});
