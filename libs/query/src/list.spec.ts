import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { compileList, compileListRows, defineResource, parseQuery, runList, type Condition } from './index';
import { evalFilter } from './memory';
import { D1, insertRows, resource, ROWS, TABLE_DDL } from './test/fixture';
import { expect400 } from './test/helpers';

const NOW = new Date('2024-03-15T12:00:00.000Z');
let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'query_list' });
  await db.pool.query(TABLE_DDL);
  await insertRows(db.pool, ROWS);
});
afterAll(() => db?.drop());

const list = (q: unknown, scope: Condition[] = D1) => runList(db.pool, resource, parseQuery(q), scope, { now: NOW });
const ids = async (q: unknown, scope: Condition[] = D1) => (await list(q, scope)).rows.map((r) => r.cloud_service_id);
const where = (key: string, operator: string, value: unknown) => ids({ filter: [{ key, operator, value }] });
const n = (...xs: number[]) => xs.map((x) => `cs-${x}`);

describe('operators on scalar columns', () => {
  test.each([
    ['name', 'eq', 'db-main', n(3)],
    ['name', 'eq', 'web-server-02', []], // eq is exact (case-sensitive)
    ['name', 'eq', null, n(4)],
    ['state', 'not', 'ACTIVE', n(3, 4)],
    ['name', 'not', null, n(1, 2, 3, 5)],
    ['provider', 'not', 'aws', n(3, 4)],
    ['instance_size', 'gt', 2.5, n(2, 3)],
    ['instance_size', 'gte', 2.5, n(1, 2, 3)],
    ['instance_size', 'lt', 2, n(5)],
    ['instance_size', 'lte', '4', n(1, 2, 5)], // numeric strings are coerced like mongoengine's fields
    ['cpu', 'lt', 2.5, n(1, 5)],
    ['cpu', 'gt', 2.5, n(2, 3)],
    ['cpu', 'gte', 2.5, n(2, 3)],
    ['cpu', 'lte', 2.5, n(1, 5)],
    ['cpu', 'eq', 2.5, []],
    ['cpu', 'not', 2, n(2, 3, 4, 5)],
    ['name', 'lt', 'd', n(2, 5)], // binary order: 'W' < 'c' < 'd'
    ['launched_at', 'exists', true, n(1, 3, 5)],
    ['launched_at', 'exists', false, n(2, 4)],
    ['name', 'contain', 'SERVER', n(1, 2)],
    ['name', 'contain', '50%', n(5)],
    ['name', 'contain', '_', n(5)],
    ['name', 'not_contain', 'server', n(3, 4, 5)],
    ['name', 'contain_in', ['main', 'cache'], n(3, 5)],
    ['name', 'not_contain_in', ['web', 'server'], n(3, 4, 5)],
    ['name', 'not_contain_in', ['web', 'main'], n(1, 2, 3, 4, 5)], // upstream: OR of not-contains
    ['provider', 'in', ['aws', 'azure'], n(1, 2, 4, 5)],
    ['provider', 'not_in', ['aws'], n(3, 4)],
    ['provider', 'in', [], []],
    ['provider', 'not_in', [], n(1, 2, 3, 4, 5)],
    ['name', 'in', [null, 'db-main'], n(3, 4)],
    ['name', 'not_in', [null, 'db-main'], n(1, 2, 5)],
    ['name', 'regex', '^web', n(1, 2)],
    ['name', 'regex_in', ['main$', '^cache'], n(3, 5)],
    ['is_managed', 'eq', true, n(1, 4)],
    ['is_managed', 'eq', 'false', n(2, 5)],
    ['is_managed', 'not', true, n(2, 3, 5)],
    ['is_managed', 'exists', false, n(3)],
    ['is_managed', 'in', [true, null], n(1, 3, 4)],
    ['cost', 'in', [10, 300], n(3, 5)],
    ['cpu', 'in', [1, 2.5, 8], n(3, 5)],
  ])('%s %s %j', async (key, op, value, want) => {
    expect(await where(key, op, value)).toEqual(want);
  });
});

describe('datetime operators', () => {
  test.each([
    ['created_at', 'datetime_gte', '2024-02-01', n(3, 4, 5)],
    ['created_at', 'datetime_lt', '2024-01-20T12:30:00Z', n(1)],
    ['created_at', 'datetime_lte', '2024-01-20T12:30:00.000Z', n(1, 2)],
    ['created_at', 'datetime_gt', '2024-02-15T00:00:00', n(5)],
    ['created_at', 'gt', '2024-02-10T08:00:00+09:00', n(3, 4, 5)],
    ['launched_at', 'eq', '2024-03-01T00:00:00Z', n(5)],
    ['launched_at', 'in', ['2024-03-01T00:00:00Z', '2024-01-01'], n(1, 5)],
    ['created_at', 'timediff_gte', 'now/d - 20d', n(5)],
    ['created_at', 'timediff_lt', 'now/m', n(1, 2, 3, 4)],
    ['created_at', 'timediff_gt', 'now - 1000w', n(1, 2, 3, 4, 5)],
    ['created_at', 'timediff_lte', 'now/w-3w', n(1, 2, 3, 4)],
    ['created_at', 'timedelta_gte', 'now/d - 20d', n(5)],
  ])('%s %s %j', async (key, op, value, want) => {
    expect(await where(key, op, value)).toEqual(want);
  });
});

describe('string arrays match elements as MongoDB does', () => {
  test.each([
    ['ip_addresses', 'eq', '10.0.0.2', n(2)],
    ['ip_addresses', 'in', ['10.0.0.1', '10.0.0.5'], n(1, 5)],
    ['ip_addresses', 'not', '10.0.0.1', n(2, 3, 4, 5)],
    ['ip_addresses', 'not_in', ['10.0.0.2'], n(1, 3, 4, 5)],
    ['ip_addresses', 'contain', '52.', n(1)],
    ['ip_addresses', 'not_contain', '10.0', n(3, 4)],
    ['ip_addresses', 'regex', '\\.5$', n(5)],
    ['ip_addresses', 'gt', '5', n(1)],
    ['ip_addresses', 'eq', null, n(4)],
    ['ip_addresses', 'exists', false, n(4)],
  ])('%s %s %j', async (key, op, value, want) => {
    expect(await where(key, op, value)).toEqual(want);
  });
});

describe('dotted JSON keys', () => {
  test.each([
    ['tags.env', 'eq', 'prod', n(1, 3, 5)],
    ['tags.env', 'in', ['dr', 'dev'], n(2, 5)],
    ['tags.env', 'not', 'prod', n(2, 4)],
    ['tags.env', 'regex', '^d', n(2, 5)],
    ['tags.level', 'gt', 2, n(1)],
    ['tags.level', 'eq', 3, n(1)],
    ['data.size', 'gt', 20, n(1, 2)], // numbers only: no coercion, 'large' is a string
    ['data.size', 'gt', 'a', n(3)],
    ['data.size', 'eq', '100', []],
    ['data.size', 'lte', 50, n(2, 5)],
    ['data.power_state', 'eq', null, n(4)],
    ['data.power_state', 'not', null, n(1, 2, 3, 5)],
    ['data.power_state', 'exists', true, n(1, 2, 3, 4, 5)],
    ['data.power_state', 'exists', false, []],
    ['data.nested.a', 'exists', true, n(1)],
    ['data.nested.a', 'exists', false, n(2, 3, 4, 5)],
    ['data.list', 'eq', 5, n(1)],
    ['data.list', 'contain', 'Z', n(1)],
    ['data.nested', 'eq', { a: 'x' }, n(1)],
    ['tags.team', 'contain', 'WE', n(1, 2)],
    ['tags.team', 'not_contain_in', ['we'], n(3, 4, 5)],
    ['data.power_state', 'contain_in', ['stop', 'xyz'], n(2)],
    ['tags', 'eq', null, n(4)],
    ['disks.size', 'gt', 50, n(1)],
    ['disks.size', 'eq', 20, n(2)],
    ['disks.size', 'not', 10, n(2, 3, 4, 5)],
    ['disks.type', 'in', ['gp3'], n(5)],
    ['disks.size', 'exists', false, n(3, 4)],
    ['disks.type', 'contain', 'IO', n(1)],
    ['disks', 'match', { size: 10, type: 'gp2' }, n(1)],
    ['disks', 'match', { size: 10, type: 'io1' }, []],
    ['disks', 'eq', null, n(4)],
    ['data', 'match', { x: 1 }, []],
  ])('%s %s %j', async (key, op, value, want) => {
    expect(await where(key, op, value)).toEqual(want);
  });
});

describe('filter, filter_or, keyword, scope', () => {
  test('filter_or conditions are ORed, then ANDed with filter', async () => {
    expect(await ids({ filter_or: [{ k: 'state', v: 'DELETED', o: 'eq' }, { k: 'provider', v: 'google_cloud', o: 'eq' }] })).toEqual(n(3, 4));
    expect(
      await ids({
        filter: [{ key: 'workspace_id', value: 'w2', operator: 'eq' }],
        filter_or: [{ key: 'state', value: 'DELETED', operator: 'eq' }, { key: 'provider', value: 'google_cloud', operator: 'eq' }],
      }),
    ).toEqual(n(3));
  });
  test.each([
    ['main', n(3)],
    ['10.0.0.5', n(5)],
    ['STOPPED', n(2)],
    ['web db', n(1, 2, 3)],
    ['   ', n(1, 2, 3, 4, 5)],
  ])('keyword %j', async (keyword, want) => {
    expect(await ids({ keyword })).toEqual(want);
  });
  test('keyword conditions join filter_or (upstream appends them there)', async () => {
    expect(await ids({ keyword: 'main', filter_or: [{ key: 'state', value: 'DELETED', operator: 'eq' }] })).toEqual(n(3, 4));
  });
  test('scope conditions are ANDed and use the field map', async () => {
    expect(await ids({}, [])).toEqual(n(1, 2, 3, 4, 5, 6));
    expect(await ids({}, [{ key: 'domain_id', value: 'd2', operator: 'eq' }])).toEqual(n(6));
    expect(await ids({}, [...D1, { key: 'workspace_id', value: ['w1', 'w9'], operator: 'in' }])).toEqual(n(1, 2));
    expect(await ids({}, [...D1, { key: 'ip_addresses', value: '10.0.0.5', operator: 'eq' }])).toEqual(n(5));
  });
});

describe('sort, page, count_only, unwind, rows', () => {
  test('sort with MongoDB null order and the id tie-breaker', async () => {
    expect(await ids({ sort: [{ key: 'name' }] })).toEqual(n(4, 2, 5, 3, 1));
    expect(await ids({ sort: [{ key: 'name', desc: true }] })).toEqual(n(1, 3, 5, 2, 4));
    expect(await ids({ sort: [{ key: 'provider' }] })).toEqual(n(1, 2, 5, 4, 3));
    expect(await ids({ sort: [{ key: 'provider', desc: true }, { key: 'instance_size', desc: true }] })).toEqual(n(3, 4, 2, 1, 5));
  });
  test('old sort forms', async () => {
    expect(await ids({ sort: { key: 'cost', desc: true } })).toEqual(n(3, 1, 2, 5, 4));
    expect(await ids({ sort: { keys: [{ key: 'state' }, { key: 'cost', desc: true }] } })).toEqual(n(1, 2, 5, 4, 3));
    // core v1's Sort message as a proto3 client sends it: the unset part at its default
    expect(await ids({ sort: { key: 'cost', desc: true, keys: [] } })).toEqual(n(3, 1, 2, 5, 4));
    expect(await ids({ sort: { key: '', desc: false, keys: [{ key: 'state', desc: false }, { key: 'cost', desc: true }] } })).toEqual(n(1, 2, 5, 4, 3));
    expect(await ids({ sort: { key: '', desc: false, keys: [] } })).toEqual(await ids({}));
    await expect400(() => parseQuery({ sort: { key: '', keys: [], kyes: [] } }), 'query.sort');
  });
  test('sort on JSON keys', async () => {
    expect(await ids({ sort: [{ key: 'data.size', desc: true }] })).toEqual(n(3, 1, 2, 5, 4)); // BSON type order: strings > numbers
  });
  test('page: start is 1-based, limit applies when > 0, total ignores paging', async () => {
    expect(await list({ page: { start: 2, limit: 2 } })).toMatchObject({ total_count: 5 });
    expect(await ids({ page: { start: 2, limit: 2 } })).toEqual(n(2, 3));
    expect(await ids({ page: { start: 0, limit: 1 } })).toEqual(n(1));
    expect(await ids({ page: { start: 5, limit: 10 } })).toEqual(n(5));
    expect(await list({ page: { start: 9, limit: 2 } })).toEqual({ rows: [], total_count: 5 });
    expect(await ids({ page: { limit: 0 } })).toEqual(n(1, 2, 3, 4, 5));
  });
  test('maxLimit is the default and the cap of page.limit', async () => {
    const small = defineResource({ ...resource.spec, maxLimit: 2 });
    const r = await runList(db.pool, small, parseQuery({}), D1);
    expect([r.rows.length, r.total_count]).toEqual([2, 5]);
    expect((await runList(db.pool, small, parseQuery({ page: { limit: 10, start: 2 } }), D1)).rows.map((x) => x.cloud_service_id)).toEqual(n(2, 3));
  });
  test('count_only', async () => {
    expect(await list({ count_only: true, filter: [{ k: 'provider', v: 'aws', o: 'eq' }] })).toEqual({ rows: [], total_count: 3 });
  });
  test('rows are the raw rows pg returns', async () => {
    const [r] = (await list({ filter: [{ k: 'cloud_service_id', v: 'cs-1', o: 'eq' }] })).rows;
    expect(r.created_at).toBeInstanceOf(Date);
    expect(r.tags).toEqual({ env: 'prod', team: 'web', level: 3 });
    expect(r.ip_addresses).toEqual(['10.0.0.1', '52.1.1.1']);
    expect(Object.keys(r).sort()).toEqual(Object.keys(ROWS[0]).sort());
  });
  test('unwind: one row per element, the array replaced by [element]', async () => {
    const r = await list({ unwind: { path: 'ip_addresses', filter: [{ k: 'ip_addresses', v: '52', o: 'contain' }] } });
    expect(r.total_count).toBe(1);
    expect(r.rows[0]).toMatchObject({ cloud_service_id: 'cs-1', ip_addresses: ['52.1.1.1'] });
    const d = await list({ unwind: { path: 'disks', filter: [{ k: 'disks.size', v: 5, o: 'gt' }] }, sort: [{ key: 'disks.size', desc: true }] });
    expect(d.rows.map((x) => [x.cloud_service_id, x.disks])).toEqual([
      ['cs-1', [{ size: 100, type: 'io1' }]],
      ['cs-2', [{ size: 20, type: 'gp2' }]],
      ['cs-1', [{ size: 10, type: 'gp2' }]],
    ]);
    const j = await list({ unwind: { path: 'data.list' }, filter: [{ k: 'cloud_service_id', v: 'cs-1', o: 'eq' }] });
    expect(j.rows.map((x) => x.data.list)).toEqual([[1], [5], ['z']]);
  });
  test('rows keep the table\'s columns in the table\'s order, without the marker columns, also when unwound', async () => {
    const cols = (await db.pool.query('SELECT * FROM cloud_service LIMIT 0')).fields.map((f) => f.name);
    const plain = (await list({ page: { limit: 2 } })).rows;
    const unwound = (await list({ unwind: { path: 'ip_addresses' }, page: { limit: 3 } })).rows;
    expect(plain).toHaveLength(2);
    expect(unwound).toHaveLength(3);
    for (const r of [...plain, ...unwound]) expect(Object.keys(r)).toEqual(cols);
    expect(unwound[0].ip_addresses).toHaveLength(1);
    expect(new Set(unwound).size).toBe(3); // one object per row, not shared
  });
  test('every value is a bind parameter', () => {
    const c = compileList(resource, parseQuery({ filter: [{ k: 'name', v: "x'; DROP TABLE cloud_service; --", o: 'eq' }, { k: 'tags.a"b', v: 1, o: 'eq' }] }), D1);
    expect(c.text).not.toContain('DROP');
    expect(c.text).not.toContain('a"b');
    expect(c.values).toContain("x'; DROP TABLE cloud_service; --");
  });
});

describe('errors are 400s naming the key', () => {
  test.each([
    [{ filter: [{ k: 'nope', v: 1, o: 'eq' }] }, 'query.filter[0].key'],
    [{ filter: [{ k: 'name.x', v: 1, o: 'eq' }] }, 'query.filter[0].key'],
    [{ filter: [{ k: 'name', v: 1, o: 'like' }] }, 'query.filter[0].operator'],
    [{ filter_or: [{ k: 'name', v: ['a'], o: 'eq' }] }, 'query.filter_or[0].value'],
    [{ filter: [{ k: 'name', v: 'a', o: 'eq' }, { k: 'name', v: 'a', o: 'in' }] }, 'query.filter[1].value'],
    [{ filter: [{ k: 'created_at', v: 'yesterday', o: 'datetime_gt' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'created_at', v: '2024-02-30', o: 'gt' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'created_at', v: 'now - 3y', o: 'timediff_gt' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'name', v: '2024-01-01', o: 'datetime_gt' }] }, 'query.filter[0].operator'],
    [{ filter: [{ k: 'name', v: 'yes', o: 'exists' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'cpu', v: '1', o: 'contain' }] }, 'query.filter[0].operator'],
    [{ filter: [{ k: 'cpu', v: 'abc', o: 'eq' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'name', v: 5, o: 'eq' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'is_managed', v: 'maybe', o: 'eq' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'disks', v: 'x', o: 'match' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'disks', v: { size: { $gt: 1 } }, o: 'match' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'name', v: { a: 1 }, o: 'match' }] }, 'query.filter[0].operator'],
    [{ filter: [{ k: 'name', v: '(', o: 'regex' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'name', v: [], o: 'contain_in' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'cpu', v: null, o: 'lt' }] }, 'query.filter[0].value'],
    [{ filter: [{ k: 'tags.env', v: { a: 1 }, o: 'gt' }] }, 'query.filter[0].value'],
    [{ sort: [{ key: 'nope' }] }, 'query.sort[0].key'],
    [{ unwind: { path: 'name' } }, 'query.unwind.path'],
    [{ unwind: { path: 'ip_addresses', filter: [{ k: 'x', v: 1, o: 'eq' }] } }, 'query.unwind.filter[0].key'],
  ])('%j -> %s', async (q, key) => {
    await expect400(list(q), key);
  });
  test('schema errors', async () => {
    await expect400(() => parseQuery({ filter: {} }), 'query.filter');
    await expect400(() => parseQuery({ filter: [{ v: 1, o: 'eq' }] }), 'query.filter[0].key', 'ERROR_REQUIRED_PARAMETER');
    await expect400(() => parseQuery({ page: { limit: 'x' } }), 'query.page.limit');
    await expect400(() => parseQuery({ sort: 'name' }), 'query.sort');
    expect(parseQuery({ filter: [{ k: 'a', o: 'eq' }], keyword: null, sort: null })).toEqual({ filter: [{ key: 'a', value: null, operator: 'eq' }], keyword: null, sort: null });
  });
  test('a Postgres regex error is a 400, not a 500', async () => {
    await expect400(where('name', 'regex', '[[:nope:]]'), 'query');
  });
});

describe('compileListRows: the page of rows without the count', () => {
  const rows = async (q: unknown, scope: Condition[] = D1) => {
    const c = compileListRows(resource, parseQuery(q), scope, { now: NOW });
    return { c, rows: (await db.pool.query(c.text, c.values)).rows };
  };
  test('the same rows, in the same order, as list answers, and no count pass', async () => {
    for (const q of [{}, { sort: [{ key: 'name', desc: true }] }, { page: { start: 2, limit: 2 } }, { filter: [{ k: 'tags.env', v: 'prod', o: 'eq' }], keyword: 'e' }, { count_only: true }]) {
      const { c, rows: got } = await rows(q);
      expect(c.text).not.toMatch(/count\(/i);
      const want = await list({ ...q, count_only: false });
      expect(got).toEqual(want.rows);
    }
  });
  test('an unwound query says which column it unwinds and answers the element as __qunwind', async () => {
    const { c, rows: got } = await rows({ unwind: { path: 'ip_addresses' }, sort: [{ key: 'ip_addresses' }] });
    expect(c.unwind).toEqual({ column: 'ip_addresses', path: [] });
    expect(got.map((r) => [r.cloud_service_id, r.__qunwind])).toEqual([
      ['cs-1', '10.0.0.1'],
      ['cs-2', '10.0.0.2'],
      ['cs-5', '10.0.0.5'],
      ['cs-1', '52.1.1.1'],
    ]);
  });
  test('errors are the same 400s', async () => {
    await expect400(() => compileListRows(resource, parseQuery({ filter: [{ k: 'nope', v: 1, o: 'eq' }] }), D1, { prefix: 'q' }), 'q.filter[0].key');
  });
});

describe('eq on a JSON path is a containment a GIN index can serve', () => {
  const docs: unknown[] = [
    null, {}, { a: null }, { a: 1 }, { a: 1.5 }, { a: '1' }, { a: true }, { a: false }, { a: 'x' }, { a: 0 }, { a: [1, 2] }, { a: ['x', null] },
    { a: [[1]] }, { a: [{ b: 1 }] }, { a: { b: 1 } }, { a: { b: [1, 'x'] } }, { a: { b: { c: 1 } } }, { a: { b: null } }, { a: { b: 'x' } },
    { a: { b: [[1]] } }, { a: { b: true } }, [1], [{ a: 1 }], 'a', 1, { 'a b': 1 }, { '0': 'x' }, ['x'], { a: ['x', 'y'] }, { a: { '0': 'y' } },
  ];
  const jr = defineResource({ table: 'json_eq', idKey: 'id', keywordKeys: [], fields: { id: { column: 'id', type: 'string' }, doc: { column: 'doc', type: 'json' } } });
  const DOCS = docs.map((doc, i) => ({ id: `j${String(i).padStart(2, '0')}`, doc }));
  beforeAll(async () => {
    await db.pool.query('CREATE TABLE json_eq (id text PRIMARY KEY, doc jsonb)');
    for (const d of DOCS) await db.pool.query('INSERT INTO json_eq VALUES ($1, $2)', [d.id, d.doc === null ? null : JSON.stringify(d.doc)]);
  });
  const KEYS = ['doc.a', 'doc.a.b', 'doc.a b', 'doc.0', 'doc.a.0'];
  const VALUES = [1, 1.5, '1', true, false, 'x', 'y', 0];

  test.each(KEYS)('%s: the same rows as (x = v OR x @> [v]) and as the in-memory evaluator', async (key) => {
    for (const v of VALUES) {
      const got = (await runList(db.pool, jr, parseQuery({ filter: [{ k: key, v, o: 'eq' }] }), [])).rows.map((r) => r.id);
      const path = key.split('.').slice(1);
      const old = await db.pool.query(
        'SELECT id FROM json_eq WHERE ((doc #> $1::text[]) = $2::jsonb OR (doc #> $1::text[]) @> $3::jsonb) ORDER BY id',
        [path, JSON.stringify(v), JSON.stringify([v])],
      );
      expect([key, v, got]).toEqual([key, v, old.rows.map((r) => r.id)]);
      // The evaluator reads no array by index (a known difference from `#>`), so it is compared where no segment is an index.
      if (!/\.[0-9]/.test(key)) {
        const mem = evalFilter(jr, DOCS, { filter: [{ key, value: v, operator: 'eq' }] }, [], NOW).map((d) => d.id);
        expect([key, v, got]).toEqual([key, v, mem]);
      }
    }
  });

  test('the SQL is a containment for a scalar, and the path form otherwise', () => {
    const sql = (key: string, v: unknown, o = 'eq') => compileList(jr, parseQuery({ filter: [{ k: key, v, o }] }), []);
    const c = sql('doc.a.b', 'x');
    expect(c.text).toContain('(t."doc" @> $1::jsonb OR t."doc" @> $2::jsonb)');
    expect(c.values.slice(0, 2)).toEqual(['{"a":{"b":"x"}}', '{"a":{"b":["x"]}}']);
    expect(c.text).not.toContain('#>');
    expect(sql('doc.a.0', 'x').text).toContain('#>'); // `#>` reads 0 as an array index; containment cannot
    expect(sql('doc.a', null).text).toContain('#>'); // null also matches a missing key
    expect(sql('doc.a', { b: 1 }).text).toContain('#>');
    expect(sql('doc', 'x').text).not.toContain('@> $1::jsonb OR');
  });

  test('EXPLAIN: the GIN index on the column serves it (jsonb_path_ops and jsonb_ops alike)', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`INSERT INTO json_eq SELECT 'f' || i, jsonb_build_object('a', jsonb_build_object('b', 1000 + i)) FROM generate_series(1, 20000) i`);
      for (const ops of ['jsonb_path_ops', 'jsonb_ops']) {
        await client.query(`CREATE INDEX json_eq_${ops}_idx ON json_eq USING GIN (doc ${ops})`);
        await client.query('ANALYZE json_eq');
        const c = compileListRows(jr, parseQuery({ filter: [{ k: 'doc.a.b', v: 1, o: 'eq' }] }), []);
        const plan = (await client.query(`EXPLAIN ${c.text}`, c.values)).rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).toContain(`Bitmap Index Scan on json_eq_${ops}_idx`);
        expect((await client.query(c.text, c.values)).rows.map((r) => r.id)).toEqual(['j14', 'j15']);
        await client.query(`DROP INDEX json_eq_${ops}_idx`);
      }
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

describe('unknown and unsupported keys of a Query', () => {
  it.each([
    [{ filtr: [{ k: 'name', v: 'x', o: 'eq' }] }, 'query.filtr', 'unknown field'],
    [{ sort: [{ key: 'name', dsc: true }] }, 'query.sort[0].dsc', 'unknown field'],
    [{ lookup: [{ from: 'project' }] }, 'query.lookup', 'not supported'],
    [{ add_fields: { x: 1 } }, 'query.add_fields', 'not supported'],
  ])('%j -> 400 on %s', async (q, key, reason) => {
    const e = await expect400(() => list(q), key);
    expect(e.message).toContain(reason);
  });

  it('reads every key of upstream Query, the unsupported ones empty', async () => {
    const q = { filter: [], filter_or: [], sort: [], page: null, minimal: false, count_only: false, only: [], keyword: '', unwind: null, lookup: [], add_fields: {} };
    expect((await list(q)).total_count).toBe(5);
  });
});
