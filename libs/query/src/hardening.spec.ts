import { createTempDatabase, type TempDatabase } from '@platform/testing';
import {
  applyGetOnly,
  applyOnly,
  compileList,
  listInMemory,
  parseAnalyzeQuery,
  parseQuery,
  parseStatisticsQuery,
  QUERY_LIMITS,
  runAnalyze,
  runList,
  runStat,
} from './index';
import { D1, insertRows, resource, ROWS, TABLE_DDL } from './test/fixture';
import { expect400 } from './test/helpers';

let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'query_hard' });
  await db.pool.query(TABLE_DDL);
  await insertRows(db.pool, ROWS);
});
afterAll(() => db?.drop());

const polluted = () => ({}) as Record<string, unknown>;
afterEach(() => {
  expect(polluted().x).toBeUndefined();
  expect(polluted().polluted).toBeUndefined();
  expect(polluted().domain_id).toBeUndefined();
});

describe('the short aliases of a condition ({k, v, o})', () => {
  it('rename to key, value and operator; the long name wins; an own __proto__ key is still refused, not taken as the prototype', async () => {
    expect(parseQuery({ filter: [{ k: 'a', v: 1, o: 'eq' }] })?.filter).toEqual([{ key: 'a', value: 1, operator: 'eq' }]);
    expect(parseQuery({ filter: [{ key: 'long', k: 'short', o: 'eq' }] })?.filter).toEqual([{ key: 'long', value: null, operator: 'eq' }]);
    expect(parseQuery({ filter: [{ k: 'a', o: 'exists', v: undefined }] })?.filter).toEqual([{ key: 'a', value: null, operator: 'exists' }]);
    const own = JSON.parse('{"k": "a", "v": 1, "o": "eq", "__proto__": {"x": 1}}');
    await expect400(() => parseQuery({ filter: [own] }), 'query.filter[0].__proto__');
  });
});

describe('prototype keys never become paths', () => {
  it('refuses them in filter keys, match values, sort, only, unwind and distinct, naming the key', async () => {
    await expect400(() => parseQuery({ filter: [{ k: 'tags.__proto__.x', v: 1, o: 'eq' }] }), 'query.filter[0].key');
    await expect400(() => parseQuery({ sort: [{ key: 'constructor' }] }), 'query.sort[0].key');
    await expect400(() => parseQuery({ only: ['tags.prototype'] }), 'query.only[0]');
    await expect400(() => parseQuery({ unwind: { path: '__proto__' } }), 'query.unwind.path');
    await expect400(() => parseStatisticsQuery({ distinct: 'data.__proto__' }), 'query.distinct');
    // A match value's keys are values, not keys of the schema: the compiler refuses them.
    const q = parseQuery({ filter: [{ k: 'tags', o: 'match', v: { '__proto__.x': 1 } }] });
    await expect400(() => compileList(resource, q, D1), 'query.filter[0].value');
    const nested = JSON.parse('{"filter":[{"k":"disks","o":"match","v":{"a":{"__proto__":{"domain_id":"evil"}}}}]}');
    await expect400(() => compileList(resource, parseQuery(nested), D1), 'query.filter[0].value');
  });

  it('refuses them as the compiler resolves keys even when a schema was skipped', async () => {
    await expect400(() => compileList(resource, { filter: [{ key: 'tags.__proto__.x', value: 1, operator: 'eq' }] }, D1), 'query.filter[0].key');
    await expect400(() => compileList(resource, { filter: [{ key: 'data.constructor', value: 1, operator: 'gt' }] }, D1), 'query.filter[0].key');
  });

  it('refuses them as stat and analyze names', async () => {
    await expect400(
      () => parseStatisticsQuery({ aggregate: [{ group: { keys: [{ key: 'provider', name: '__proto__' }], fields: [{ name: 'n', operator: 'count' }] } }] }),
      'query.aggregate[0].group.keys[0].name',
    );
    await expect400(() => parseAnalyzeQuery({ group_by: ['provider'], fields: { constructor: { operator: 'count' } } }), 'query.fields.constructor');
    await expect400(() => parseAnalyzeQuery({ group_by: [{ key: 'provider', name: 'a.constructor' }], fields: { n: { operator: 'count' } } }), 'query.group_by[0].name');
  });

  it('only never walks into a prototype, even through a stored __proto__ key', () => {
    const stored = JSON.parse('{"name":"x","tags":{"__proto__":{"polluted":1},"env":"prod"}}');
    expect(applyOnly(stored, ['tags.__proto__.polluted', 'tags.env', 'name'])).toEqual({ tags: { env: 'prod' }, name: 'x' });
    expect(applyOnly(stored, ['__proto__', 'constructor.prototype'])).toEqual({});
    expect(() => applyGetOnly({ name: 'x' }, ['constructor'])).toThrow(/constructor is not a field/);
  });
});

describe('regexes', () => {
  it('run on a linear-time engine in memory: a catastrophic pattern answers at once', () => {
    const r = listInMemory(resource, ROWS.map((row) => ({ ...row, name: 'a'.repeat(40) })), parseQuery({ filter: [{ k: 'name', v: '^(.|.|.)*(.|.)*Z$', o: 'regex' }] }));
    expect(r.total_count).toBe(0);
    const nested = listInMemory(resource, ROWS.map((row) => ({ ...row, name: 'a'.repeat(40) + '!' })), parseQuery({ filter: [{ k: 'name', v: '(a+)+$', o: 'regex' }] }));
    expect(nested.total_count).toBe(0);
    const hit = listInMemory(resource, ROWS.map((row) => ({ ...row, name: 'a'.repeat(40) })), parseQuery({ filter: [{ k: 'name', v: '(a+)+$', o: 'regex' }] }));
    expect(hit.total_count).toBe(ROWS.length);
  });

  it('refuse what the linear-time engine cannot run, and patterns past the length limit, with a 400', async () => {
    await expect400(() => listInMemory(resource, ROWS, parseQuery({ filter: [{ k: 'name', v: '(?=web)web', o: 'regex' }] })), 'query.filter[0].value');
    await expect400(() => listInMemory(resource, ROWS, parseQuery({ filter_or: [{ k: 'name', v: ['ok', '(a)\\1'], o: 'regex_in' }] })), 'query.filter_or[0].value');
    await expect400(() => compileList(resource, parseQuery({ filter: [{ k: 'name', v: 'a'.repeat(QUERY_LIMITS.regexLength + 1), o: 'regex' }] }), D1), 'query.filter[0].value');
  });

  it('that PostgreSQL evaluates are bounded by the statement timeout: a 400 the caller can act on, not a 5xx', async () => {
    // A statement that cannot finish in time (here: blocked by a lock another session holds).
    const holder = await db.pool.connect();
    const client = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE cloud_service IN ACCESS EXCLUSIVE MODE');
      await client.query('SET statement_timeout = 100');
      const q = parseQuery({ filter: [{ k: 'name', v: '^(a|aa)*b$', o: 'regex' }] });
      const e = await expect400(runList(client, resource, q, D1), 'query', 'ERROR_QUERY_TIMEOUT');
      expect(e.message).toMatch(/did not finish within the time limit/);
    } finally {
      await holder.query('ROLLBACK');
      await client.query('RESET statement_timeout');
      holder.release();
      client.release();
    }
  });
});

describe('what the fuzzer found', () => {
  it('an inherited name is no operator', async () => {
    for (const o of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      await expect400(() => compileList(resource, parseQuery({ filter: [{ k: 'name', v: 'x', o }] }), D1), 'query.filter[0].operator');
      await expect400(() => listInMemory(resource, ROWS, parseQuery({ filter: [{ k: 'name', v: 'x', o }] })), 'query.filter[0].operator');
    }
  });

  it('in / not_in with an empty list on a JSON sub-key match nothing / everything, and still check the key', async () => {
    const q = (o: string, k = 'tags.env') => parseQuery({ filter: [{ k, v: [], o }] });
    expect(await runList(db.pool, resource, q('in'), D1)).toEqual({ rows: [], total_count: 0 });
    expect((await runList(db.pool, resource, q('not_in'), D1)).total_count).toBe(ROWS.filter((r) => r.domain_id === 'd1').length);
    expect((await runList(db.pool, resource, parseQuery({ ...q('in'), count_only: true }), D1)).total_count).toBe(0);
    await expect400(() => runList(db.pool, resource, q('in', 'colour'), D1), 'query.filter[0].key');
  });

  it('answers a value PostgreSQL refuses in its own words, without PostgreSQL\'s message', async () => {
    const e = await expect400(runList(db.pool, resource, parseQuery({ filter: [{ k: 'cpu', v: '1e+110', o: 'eq' }] }), D1), 'query');
    expect(e.message).not.toMatch(/syntax|integer:|"1e\+110"/);
    // A pattern JavaScript takes and PostgreSQL refuses (`\\k` is no escape there).
    const re = await expect400(runList(db.pool, resource, parseQuery({ filter: [{ k: 'name', v: 'x\\k', o: 'regex' }] }), D1), 'query');
    expect(re.message).toBe('Invalid parameter. (key = query, reason = invalid regular expression)');
  });
});

describe('bounds of one query', () => {
  it('refuses too many conditions, list values, sort keys and too long keys', async () => {
    const cond = { k: 'name', v: 'x', o: 'eq' };
    await expect400(() => parseQuery({ filter: Array(QUERY_LIMITS.conditions + 1).fill(cond) }), 'query.filter');
    await expect400(() => parseQuery({ filter: [{ k: 'name', v: Array(QUERY_LIMITS.listValues + 1).fill('x'), o: 'in' }] }), 'query.filter[0].value');
    await expect400(() => parseQuery({ sort: Array(QUERY_LIMITS.sortKeys + 1).fill({ key: 'name' }) }), 'query.sort');
    await expect400(() => parseQuery({ filter: [{ k: 'tags.' + 'a'.repeat(QUERY_LIMITS.keyLength), v: 1, o: 'eq' }] }), 'query.filter[0].key');
    expect(parseQuery({ filter: Array(QUERY_LIMITS.conditions).fill(cond) }).filter).toHaveLength(QUERY_LIMITS.conditions);
  });
});

describe('result caps', () => {
  const byName = { aggregate: [{ group: { keys: [{ key: 'cloud_service_id', name: 'id' }], fields: [{ name: 'n', operator: 'count' }] } }, { sort: [{ key: 'id' }] }] };

  it('stat stops at the cap and says there was more', async () => {
    const all = await runStat(db.pool, resource, parseStatisticsQuery(byName), D1);
    const n = (all.results as unknown[]).length;
    expect(all.more).toBeUndefined();
    const capped = await runStat(db.pool, resource, parseStatisticsQuery(byName), D1, { maxResults: 2 });
    expect(capped.results).toEqual((all.results as unknown[]).slice(0, 2));
    expect(capped.more).toBe(true);
    const paged = await runStat(db.pool, resource, parseStatisticsQuery({ ...byName, page: { start: 1, limit: 100 } }), D1, { maxResults: 2 });
    expect(paged).toEqual({ results: (all.results as unknown[]).slice(0, 2), total_count: n, more: true });
    const exact = await runStat(db.pool, resource, parseStatisticsQuery(byName), D1, { maxResults: n });
    expect(exact.more).toBeUndefined();
  });

  it('distinct stops at the cap and says there was more', async () => {
    const all = await runStat(db.pool, resource, parseStatisticsQuery({ distinct: 'name' }), D1);
    const capped = await runStat(db.pool, resource, parseStatisticsQuery({ distinct: 'name' }), D1, { maxResults: 1 });
    expect(capped).toEqual({ results: (all.results as unknown[]).slice(0, 1), more: true });
  });

  it('analyze stops at the cap with more: true, also when page.limit asks for more', async () => {
    const q = { group_by: ['cloud_service_id'], fields: { n: { operator: 'count' } }, sort: [{ key: 'cloud_service_id' }] };
    const all = await runAnalyze(db.pool, resource, parseAnalyzeQuery(q), D1);
    expect(all.more).toBe(false);
    const capped = await runAnalyze(db.pool, resource, parseAnalyzeQuery(q), D1, { maxResults: 2 });
    expect(capped).toEqual({ results: all.results.slice(0, 2), more: true });
    const asked = await runAnalyze(db.pool, resource, parseAnalyzeQuery({ ...q, page: { limit: 50 } }), D1, { maxResults: 2 });
    expect(asked).toEqual({ results: all.results.slice(0, 2), more: true });
  });
});
