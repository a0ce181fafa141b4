import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { parseStatisticsQuery, runStat } from './index';
import { D1, insertRows, resource, ROWS, TABLE_DDL } from './test/fixture';
import { expect400 } from './test/helpers';

let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'query_stat' });
  await db.pool.query(TABLE_DDL);
  await insertRows(db.pool, ROWS);
});
afterAll(() => db?.drop());

const stat = (q: unknown) => runStat(db.pool, resource, parseStatisticsQuery(q), D1);
const results = async (q: unknown) => (await stat(q)).results as Record<string, unknown>[];
const byProvider = (fields: unknown[], more: unknown[] = []) => ({
  aggregate: [{ group: { keys: [{ key: 'provider', name: 'provider' }], fields } }, { sort: [{ key: 'provider' }] }, ...more],
});

describe('group', () => {
  test('every group operator', async () => {
    const r = await results(
      byProvider([
        { name: 'n', operator: 'count' },
        { k: 'cost', n: 'total', o: 'sum' },
        { key: 'cost', name: 'avg', operator: 'average' },
        { key: 'cpu', name: 'hi', operator: 'max' },
        { key: 'cpu', name: 'lo', operator: 'min' },
        { key: 'name', name: 'first', operator: 'first' },
        { key: 'name', name: 'last', operator: 'last' },
        { key: 'name', name: 'names', operator: 'push' },
        { name: 'pairs', operator: 'push', fields: [{ key: 'name', name: 'n' }, { key: 'created_at', name: 'at' }] },
        { key: 'tags.team', name: 'teams', operator: 'add_to_set' },
        { key: 'tags', name: 'tags', operator: 'merge_objects' },
        { key: 'is_managed', name: 'managed', operator: 'max' },
        { key: 'data.size', name: 'size', operator: 'max' },
        { key: 'ip_addresses', name: 'ips', operator: 'first' },
      ]),
    );
    expect(r.map((x) => x.provider)).toEqual(['aws', 'azure', 'google_cloud']);
    expect(r[0]).toMatchObject({
      n: 3,
      avg: 76.2,
      hi: 4,
      lo: 1,
      first: 'web-server-01',
      last: 'cache_50%',
      names: ['web-server-01', 'Web-Server-02', 'cache_50%'],
      teams: ['web', 'data'].sort(),
      tags: { env: ['prod', 'dr'], team: 'data', level: 3 },
      managed: true,
      size: 100,
      ips: ['10.0.0.1', '52.1.1.1'],
    });
    expect(r[0].total).toBeCloseTo(228.6);
    expect((r[0].pairs as unknown[])[0]).toEqual({ n: 'web-server-01', at: '2024-01-05T10:00:00.000Z' });
    expect(r[1]).toMatchObject({ n: 1, total: 0, avg: null, hi: null, names: [], teams: [], tags: {}, managed: true, first: null });
    expect(r[2]).toMatchObject({ n: 1, total: 300, size: 'large', first: 'db-main' });
  });

  test('conditions (count, sum, average) as MongoDB $cond; null sorts lowest', async () => {
    const r = await results(
      byProvider([
        { name: 'expensive', operator: 'count', conditions: [{ key: 'cost', value: 100, operator: 'gt' }] },
        { key: 'cost', name: 'small', operator: 'sum', conditions: [{ key: 'cpu', value: 2, operator: 'lte' }] },
        { key: 'cost', name: 'avg', operator: 'average', conditions: [{ key: 'tags.team', value: 'web', operator: 'eq' }] },
        { name: 'notaws', operator: 'count', conditions: [{ key: 'state', value: 'ACTIVE', operator: 'not' }, { key: 'created_at', value: '2024-02-11', operator: 'gte' }] },
      ]),
    );
    expect(r.map((x) => [x.provider, x.expensive, x.small, x.notaws])).toEqual([
      ['aws', 1, 130.5, 0],
      ['azure', 0, 0, 1],
      ['google_cloud', 1, 0, 0],
    ]);
    expect(r[0].avg).toBeCloseTo((120.5 + 98.1) / 3);
  });

  test('no keys: one row over everything, none over nothing', async () => {
    expect(await results({ aggregate: [{ group: { fields: [{ name: 'n', operator: 'count' }] } }] })).toEqual([{ n: 5 }]);
    expect(await results({ filter: [{ k: 'name', v: 'zzz', o: 'eq' }], aggregate: [{ group: { fields: [{ name: 'n', operator: 'count' }] } }] })).toEqual([]);
  });

  test('date_format keys', async () => {
    const f = (date_format: string) =>
      results({
        aggregate: [
          { group: { keys: [{ key: 'created_at', name: 'd', date_format }], fields: [{ name: 'n', operator: 'count' }] } },
          { sort: [{ key: 'd' }] },
        ],
      });
    expect(await f('year')).toEqual([{ d: 2024, n: 5 }]);
    expect(await f('month')).toEqual([{ d: 1, n: 2 }, { d: 2, n: 2 }, { d: 3, n: 1 }]);
    expect((await f('day')).map((x) => x.d)).toEqual([1, 5, 10, 15, 20]);
    expect(await f('%Y-%m')).toEqual([{ d: '2024-01', n: 2 }, { d: '2024-02', n: 2 }, { d: '2024-03', n: 1 }]);
    expect((await f('%Y/%m/%d %H:%M "T"'))[0]).toEqual({ d: '2024/01/05 10:00 "T"', n: 1 });
  });

  test('first/last follow a preceding sort', async () => {
    const r = await results({
      aggregate: [
        { sort: [{ key: 'cost' }] },
        { group: { keys: [{ key: 'provider', name: 'p' }], fields: [{ key: 'name', name: 'top', operator: 'first' }, { key: 'name', name: 'bottom', operator: 'last' }, { key: 'name', name: 'all', operator: 'push' }] } },
        { match: { filter: [{ key: 'p', value: 'aws', operator: 'eq' }] } },
      ],
    });
    expect(r).toEqual([{ p: 'aws', top: 'cache_50%', bottom: 'web-server-01', all: ['cache_50%', 'Web-Server-02', 'web-server-01'] }]);
  });
});

describe('other stages', () => {
  test('unwind (with filter), count, match, sort, skip, limit', async () => {
    expect(await results({ aggregate: [{ unwind: { path: 'ip_addresses' } }, { count: { name: 'n' } }] })).toEqual([{ n: 4 }]);
    expect(
      await results({ aggregate: [{ unwind: { path: 'ip_addresses', filter: [{ k: 'ip_addresses', v: '10.', o: 'contain' }] } }, { count: { name: 'n' } }] }),
    ).toEqual([{ n: 3 }]);
    expect(await results({ aggregate: [{ match: { filter: [{ k: 'name', v: 'zzz', o: 'eq' }] } }, { count: { name: 'n' } }] })).toEqual([]);
    const r = await results({
      aggregate: [
        { unwind: { path: 'disks' } },
        { group: { keys: [{ key: 'disks.type', name: 'type' }], fields: [{ key: 'disks.size', name: 'size', operator: 'sum' }, { name: 'n', operator: 'count' }] } },
        { match: { filter: [{ key: 'n', value: 1, operator: 'gte' }] } },
        { sort: [{ key: 'size', desc: true }] },
        { skip: 1 },
        { limit: 2 },
      ],
    });
    expect(r).toEqual([{ type: 'gp2', size: 30, n: 2 }, { type: 'gp3', size: 5, n: 1 }]);
    const m = await results(byProvider([{ name: 'n', operator: 'count' }], [{ match: { filter: [{ key: 'n', value: 2, operator: 'gte' }] } }]));
    expect(m).toEqual([{ provider: 'aws', n: 3 }]);
  });

  test('old sort form inside a stage, and unwind of a JSON sub-array', async () => {
    const r = await results({
      filter: [{ k: 'cloud_service_id', v: 'cs-1', o: 'eq' }],
      aggregate: [{ unwind: { path: 'data.list' } }, { project: { fields: [{ key: 'data.list', name: 'v' }] } }, { sort: { key: 'v', desc: true } }],
    });
    expect(r).toEqual([{ v: 'z' }, { v: 5 }, { v: 1 }]);
  });

  test('project operators; exclude_keys drops the group keys', async () => {
    const stages = [
      {
        group: {
          keys: [{ key: 'provider', name: 'provider' }],
          fields: [{ name: 'n', operator: 'count' }, { key: 'cost', name: 'total', operator: 'sum' }, { key: 'name', name: 'names', operator: 'push' }, { key: 'tags', name: 'tags', operator: 'merge_objects' }],
        },
      },
      {
        project: {
          fields: [
            { key: 'names', name: 'k', operator: 'size' },
            { name: 'avg', operator: 'divide', fields: ['total', 'n'] },
            { name: 'zero', operator: 'divide', fields: ['n', 0] },
            { name: 'x', operator: 'add', fields: ['n', 1, { operator: 'multiply', fields: ['n', 2] }] },
            { name: 'd', operator: 'subtract', fields: ['total', 'n'] },
            { key: 'tags', name: 'pairs', operator: 'object_to_array' },
            { key: 'n', name: 'n' },
          ],
        },
      },
      { project: { fields: [{ key: 'pairs', name: 'obj', operator: 'array_to_object' }, { name: 'k', key: 'k' }, { name: 'avg' }, { name: 'zero' }, { name: 'x' }, { name: 'd' }, { name: 'n' }], only_keys: true } },
      { sort: [{ key: 'provider' }] },
    ];
    const r = await results({ aggregate: stages });
    expect(r[0]).toMatchObject({ provider: 'aws', k: 3, zero: null, x: 10, obj: { env: ['prod', 'dr'], team: 'data', level: 3 } });
    expect(r[0].avg).toBeCloseTo(76.2);
    expect(r[0].d).toBeCloseTo(225.6);
    expect(r[1]).toMatchObject({ provider: 'azure', k: 0, avg: 0, x: 4, obj: null });
    const ex = await results({ aggregate: [stages[0], { project: { fields: [{ key: 'n', name: 'n' }], exclude_keys: true } }, { sort: [{ key: 'n' }] }] });
    expect(ex).toEqual([{ n: 1 }, { n: 1 }, { n: 3 }]);
  });

  test('project on documents; sum of an array', async () => {
    expect(
      await results({
        filter: [{ k: 'cloud_service_id', v: 'cs-1', o: 'eq' }],
        aggregate: [{ project: { fields: [{ key: 'data.list', name: 's', operator: 'sum' }, { key: 'cloud_service_id', name: 'id' }, { key: 'ip_addresses', name: 'n', operator: 'size' }, { key: 'cost', name: 'c', operator: 'sum' }] } }],
      }),
    ).toEqual([{ s: 6, id: 'cs-1', n: 2, c: 120.5 }]);
  });

  test('documents without group are answered with their API keys', async () => {
    const r = await results({ aggregate: [{ sort: [{ key: 'cost', desc: true }] }, { limit: 1 }] });
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ cloud_service_id: 'cs-3', cost: 300, instance_size: 8, tags: { env: 'prod' } });
    expect(r[0].created_at).toBeInstanceOf(Date);
  });
});

describe('page, distinct, keyword', () => {
  test('total_count only when page.limit is set', async () => {
    const q = byProvider([{ name: 'n', operator: 'count' }]);
    expect(await stat(q)).not.toHaveProperty('total_count');
    expect(await stat({ ...q, page: { start: 2, limit: 1 } })).toEqual({ results: [{ provider: 'azure', n: 1 }], total_count: 3 });
    expect(await stat({ ...q, page: { start: 7, limit: 1 } })).toEqual({ results: [], total_count: 3 });
  });
  test('distinct: sorted values, array elements, paging', async () => {
    expect(await stat({ distinct: 'state' })).toEqual({ results: ['ACTIVE', 'DELETED', 'DISCONNECTED'] });
    expect((await stat({ distinct: 'ip_addresses' })).results).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.5', '52.1.1.1']);
    expect((await stat({ distinct: 'tags.env' })).results).toEqual(['dev', 'dr', 'prod']);
    expect((await stat({ distinct: 'cpu' })).results).toEqual([1, 2, 4, 8]);
    expect((await stat({ distinct: 'disks.type' })).results).toEqual(['gp2', 'gp3', 'io1']);
    expect(await stat({ distinct: 'ip_addresses', page: { start: 2, limit: 2 } })).toEqual({ results: ['10.0.0.2', '10.0.0.5'], total_count: 4 });
    expect((await stat({ distinct: 'state', keyword: 'main' })).results).toEqual(['DISCONNECTED']);
  });
});

describe('errors', () => {
  const g = (fields: unknown[], keys: unknown[] = [{ key: 'provider', name: 'p' }]) => ({ aggregate: [{ group: { keys, fields } }] });
  test.each([
    [{}, 'query.aggregate', 'ERROR_REQUIRED_PARAMETER'],
    [{ aggregate: [] }, 'query.aggregate', 'ERROR_REQUIRED_PARAMETER'],
    [g([{ name: 'x', operator: 'median', key: 'cost' }]), 'query.aggregate[0].group.fields[0].operator'],
    [g([{ name: 'x', operator: 'sum' }]), 'query.aggregate[0].group.fields[0].key', 'ERROR_REQUIRED_PARAMETER'],
    [g([{ name: 'x', operator: 'push' }]), 'query.aggregate[0].group.fields[0].key', 'ERROR_REQUIRED_PARAMETER'],
    [g([{ name: 'p', operator: 'count' }]), 'query.aggregate[0].group.fields[0].name'],
    [g([{ name: 'x', operator: 'max', key: 'cpu', conditions: [{ k: 'cpu', v: 1, o: 'eq' }] }]), 'query.aggregate[0].group.fields[0].conditions'],
    [g([{ name: 'x', operator: 'count', conditions: [{ k: 'cpu', v: [1], o: 'in' }] }]), 'query.aggregate[0].group.fields[0].conditions[0].operator'],
    [g([{ name: 'x', operator: 'count', conditions: [{ k: 'cpu', o: 'eq' }] }]), 'query.aggregate[0].group.fields[0].conditions[0].value'],
    [g([{ name: 'x', operator: 'merge_objects', key: 'name' }]), 'query.aggregate[0].group.fields[0].key'],
    [g([], [{ key: 'nope', name: 'p' }]), 'query.aggregate[0].group.keys[0].key'],
    [g([], []), 'query.aggregate[0].group.keys', 'ERROR_REQUIRED_PARAMETER'],
    [g([], [{ key: 'name', name: 'p', date_format: 'year' }]), 'query.aggregate[0].group.keys[0].date_format'],
    [g([], [{ key: 'created_at', name: 'p', date_format: '%Q' }]), 'query.aggregate[0].group.keys[0].date_format'],
    [{ aggregate: [{}] }, 'query.aggregate[0]'],
    [{ aggregate: [{ limit: 1, skip: 1 }] }, 'query.aggregate[0]'],
    [{ aggregate: [{ limit: 0 }] }, 'query.aggregate[0].limit'],
    [{ aggregate: [{ skip: -1 }] }, 'query.aggregate[0].skip'],
    [{ aggregate: [{ unwind: { path: 'nope' } }] }, 'query.aggregate[0].unwind.path'],
    [{ aggregate: [{ sort: [{ key: 'nope' }] }] }, 'query.aggregate[0].sort[0].key'],
    [{ aggregate: [{ group: { keys: [{ key: 'provider', name: 'p' }] } }, { match: { filter: [{ k: 'cost', v: 1, o: 'eq' }] } }] }, 'query.aggregate[1].match.filter[0].key'],
    [{ aggregate: [{ project: { fields: [{ name: 'x', operator: 'concat', key: 'name' }] } }] }, 'query.aggregate[0].project.fields[0].operator'],
    [{ aggregate: [{ project: { fields: [{ name: 'x', operator: 'divide', fields: ['cpu', 'cost', 2] }] } }] }, 'query.aggregate[0].project.fields[0].fields'],
    [{ aggregate: [{ project: { fields: [{ name: 'x', operator: 'add', fields: ['nope'] }] } }] }, 'query.aggregate[0].project.fields[0].fields[0]'],
    [{ aggregate: [{ project: { fields: [{ name: 'x', operator: 'size', key: 'name' }] } }] }, 'query.aggregate[0].project.fields[0].key'],
    [{ aggregate: [{ project: { fields: [] } }] }, 'query.aggregate[0].project.fields', 'ERROR_REQUIRED_PARAMETER'],
    [{ distinct: 'nope' }, 'query.distinct'],
    [{ distinct: 'state', filter: [{ k: 'state', v: 1, o: 'eq' }] }, 'query.filter[0].value'],
  ])('%j -> %s', async (q, key, code = 'ERROR_INVALID_PARAMETER') => {
    await expect400(() => stat(q), key, code);
  });
  test('schema errors', async () => {
    await expect400(() => parseStatisticsQuery({ aggregate: [{ group: { keys: [{ key: 'a' }] } }] }), 'query.aggregate[0].group.keys[0].name', 'ERROR_REQUIRED_PARAMETER');
    await expect400(() => parseStatisticsQuery({ aggregate: {} }), 'query.aggregate');
  });
});

describe('unknown keys of a StatisticsQuery', () => {
  it.each([
    [{ distinct: 'provider', distnct: 'x' }, 'query.distnct'],
    [{ aggregate: [{ count: { name: 'n' }, cnt: 1 }] }, 'query.aggregate[0].cnt'],
    // the objects inside a stage are strict too: a typo is never dropped silently
    [{ aggregate: [{ group: { keys: [{ key: 'provider', nme: 'p' }] } }] }, 'query.aggregate[0].group.keys[0].nme'],
    [{ aggregate: [{ group: { keys: [{ key: 'provider', name: 'p' }], fields: [{ name: 'n', operator: 'count', condition: [] }] } }] }, 'query.aggregate[0].group.fields[0].condition'],
    [{ aggregate: [{ group: { keys: [{ key: 'provider', name: 'p' }], fields: [{ name: 'x', operator: 'push', fields: [{ key: 'name', name: 'n', x: 1 }] }] } }] }, 'query.aggregate[0].group.fields[0].fields[0].x'],
    [{ aggregate: [{ group: { keys: [{ key: 'provider', name: 'p' }], field: [] } }] }, 'query.aggregate[0].group.field'],
    [{ aggregate: [{ count: { name: 'n', nme: 'x' } }] }, 'query.aggregate[0].count.nme'],
    [{ aggregate: [{ match: { filter: [], filtr: [] } }] }, 'query.aggregate[0].match.filtr'],
    [{ aggregate: [{ project: { fields: [{ key: 'name', name: 'n' }], exclude_key: true } }] }, 'query.aggregate[0].project.exclude_key'],
    [{ aggregate: [{ project: { fields: [{ key: 'name', name: 'n', opertor: 'size' }] } }] }, 'query.aggregate[0].project.fields[0].opertor'],
  ])('%j -> 400 on %s', async (q, key) => {
    const e = await expect400(() => stat(q), key);
    expect(e.message).toContain('unknown field');
  });
});
