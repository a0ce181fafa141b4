import fc from 'fast-check';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { runList, runStat, parseQuery, parseStatisticsQuery, type Condition } from './index';
import { TABLE_DDL, insertRows, resource, type Row } from './test/fixture';
import { evalFilter, evalList, cmpScalar, type Doc } from './memory';

/** Random valid queries through the compiler and through the in-memory evaluator, over the same random rows. */

const NOW = new Date('2024-03-15T12:00:00.000Z');
const NAMES = ['alpha', 'Beta', 'gamma-1', 'delta_2', '50%off', 'ALPHA-x', 'b', ''];
const STATES = ['ACTIVE', 'DISCONNECTED', 'DELETED'];
const PROVIDERS = ['aws', 'azure', 'google_cloud'];
const IPS = ['10.0.0.1', '10.0.0.2', '52.1.1.1', '192.168.0.10'];
const ENVS = ['prod', 'dev', 'stg'];
const DATES = ['2024-01-01T00:00:00.000Z', '2024-01-15T06:30:00.000Z', '2024-02-29T23:59:59.000Z', '2024-03-10T00:00:00.000Z', '2024-03-15T11:00:00.000Z'];

const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const rowArb = (i: number): fc.Arbitrary<Row> =>
  fc.record({
    cloud_service_id: fc.constant(`cs-${String(i).padStart(3, '0')}`),
    name: orNull(fc.constantFrom(...NAMES)),
    state: fc.constantFrom(...STATES),
    provider: orNull(fc.constantFrom(...PROVIDERS)),
    instance_size: orNull(fc.constantFrom(0, 0.5, 1, 2.5, 4, 16)),
    cpu: orNull(fc.integer({ min: 0, max: 8 })),
    is_managed: orNull(fc.boolean()),
    created_at: fc.constantFrom(...DATES),
    launched_at: orNull(fc.constantFrom(...DATES)),
    ip_addresses: orNull(fc.uniqueArray(fc.constantFrom(...IPS), { maxLength: 3 })),
    tags: orNull(
      fc.record(
        { env: fc.oneof(fc.constantFrom(...ENVS), fc.uniqueArray(fc.constantFrom(...ENVS), { maxLength: 2 })), team: fc.constantFrom('web', 'data', 'Web') },
        { requiredKeys: [] },
      ),
    ),
    data: orNull(
      fc.record(
        { power_state: orNull(fc.constantFrom('RUNNING', 'STOPPED')), size: fc.oneof(fc.constantFrom(1, 10, 100), fc.constantFrom('large', 'small')) },
        { requiredKeys: [] },
      ),
    ),
    disks: orNull(fc.array(fc.record({ size: fc.constantFrom(5, 10, 100), type: fc.constantFrom('gp2', 'io1') }), { maxLength: 2 })),
    domain_id: fc.constantFrom('d1', 'd1', 'd1', 'd2'),
    workspace_id: orNull(fc.constantFrom('w1', 'w2')),
    billed_month: fc.constantFrom('2024-01', '2024-02', '2024-03'),
    cost: orNull(fc.constantFrom(0, 1.25, 10, 99.5, 300)),
  }) as fc.Arbitrary<Row>;

const ROWS: Row[] = Array.from({ length: 80 }, (_, i) => fc.sample(rowArb(i), { numRuns: 1, seed: 1000 + i })[0]);
const DOCS: Doc[] = ROWS.map((r) => ({
  ...r,
  created_at: new Date(r.created_at),
  launched_at: r.launched_at ? new Date(r.launched_at) : null,
}));

const c = (key: string, operator: string, value: unknown): Condition => ({ key, operator, value });
const strOps = (key: string, pool: string[]) =>
  fc.oneof(
    fc.constantFrom('eq', 'not', 'lt', 'lte', 'gt', 'gte', 'contain', 'not_contain', 'regex').chain((op) =>
      fc.constantFrom(...pool, 'a', 'AL').map((v) => c(key, op, op === 'regex' ? `^${v.replace(/[^a-z0-9]/gi, '')}` : v)),
    ),
    fc.constantFrom('eq', 'not').map((op) => c(key, op, null)),
    fc.constantFrom('in', 'not_in', 'contain_in', 'not_contain_in').chain((op) =>
      fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 }).map((v) => c(key, op, v)),
    ),
    fc.boolean().map((v) => c(key, 'exists', v)),
  );
const numOps = (key: string, pool: number[]) =>
  fc.oneof(
    fc.constantFrom('eq', 'not', 'lt', 'lte', 'gt', 'gte').chain((op) => fc.constantFrom(...pool).map((v) => c(key, op, v))),
    fc.constantFrom('in', 'not_in').chain((op) => fc.uniqueArray(fc.constantFrom(...pool), { minLength: 0, maxLength: 3 }).map((v) => c(key, op, v))),
    fc.boolean().map((v) => c(key, 'exists', v)),
    fc.constantFrom('eq', 'not').map((op) => c(key, op, null)),
  );
const condArb: fc.Arbitrary<Condition> = fc.oneof(
  strOps('name', NAMES),
  strOps('state', STATES),
  strOps('provider', PROVIDERS),
  numOps('instance_size', [0, 0.5, 1, 2.5, 3, 16]),
  numOps('cpu', [0, 1, 2.5, 4, 8]),
  numOps('cost', [0, 1.25, 50, 300]),
  fc.oneof(fc.constantFrom('eq', 'not').chain((op) => fc.boolean().map((v) => c('is_managed', op, v))), fc.boolean().map((v) => c('is_managed', 'exists', v))),
  fc.constantFrom('datetime_lt', 'datetime_lte', 'datetime_gt', 'datetime_gte', 'lt', 'gte', 'eq', 'not').chain((op) =>
    fc.constantFrom('created_at', 'launched_at').chain((k) => fc.constantFrom(...DATES, '2024-02-01').map((v) => c(k, op, v))),
  ),
  fc.constantFrom('timediff_lt', 'timediff_gte').chain((op) =>
    fc.constantFrom('now/d - 30d', 'now - 1h', 'now/m', 'now/w + 1d').map((v) => c('created_at', op, v)),
  ),
  strOps('ip_addresses', IPS),
  strOps('tags.env', ENVS),
  strOps('tags.team', ['web', 'data']),
  strOps('data.power_state', ['RUNNING', 'STOPPED']),
  fc.constantFrom('eq', 'not', 'lt', 'gte').chain((op) => fc.constantFrom(1, 10, 'large', 'm').map((v) => c('data.size', op, v))),
  fc.constantFrom('eq', 'not', 'gt', 'lte', 'exists').chain((op) => fc.constantFrom(5, 10, 100).map((v) => c('disks.size', op, op === 'exists' ? v > 5 : v))),
);
const SORT_KEYS = ['name', 'state', 'provider', 'instance_size', 'cpu', 'created_at', 'launched_at', 'is_managed', 'cost', 'tags.team', 'data.size', 'tags.env'];
const queryArb = fc.record(
  {
    filter: fc.array(condArb, { maxLength: 3 }),
    filter_or: fc.array(condArb, { maxLength: 2 }),
    keyword: fc.constantFrom('', 'alpha', 'web 10.0.0', 'RUN', 'x y'),
    sort: fc.array(fc.record({ key: fc.constantFrom(...SORT_KEYS), desc: fc.boolean() }), { maxLength: 2 }),
    page: fc.record({ start: fc.integer({ min: 0, max: 20 }), limit: fc.integer({ min: -1, max: 15 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const scopeArb = fc.constantFrom<Condition[][]>(
  [c('domain_id', 'eq', 'd1')],
  [c('domain_id', 'eq', 'd1'), c('workspace_id', 'in', ['w1', 'w2'])],
  [],
);

let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'query_prop' });
  await db.pool.query(TABLE_DDL);
  await insertRows(db.pool, ROWS);
});
afterAll(() => db?.drop());

test('list: compiler and evaluator agree on random queries', async () => {
  await fc.assert(
    fc.asyncProperty(queryArb, scopeArb, async (raw, scope) => {
      const q = parseQuery(raw);
      const got = await runList(db.pool, resource, q, scope, { now: NOW });
      const want = evalList(resource, DOCS, raw, scope, NOW);
      expect(got.total_count).toBe(want.total_count);
      expect(got.rows.map((r) => r.cloud_service_id)).toEqual(want.rows.map((r) => r.cloud_service_id));
    }),
    { numRuns: 400 },
  );
});

const GROUP_KEYS = ['provider', 'state', 'is_managed', 'tags.team', 'workspace_id', 'cpu'];
test('stat: group/count/sum/min/max agree on random queries', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(condArb, { maxLength: 2 }),
      fc.uniqueArray(fc.constantFrom(...GROUP_KEYS), { minLength: 0, maxLength: 2 }),
      scopeArb,
      async (filter, keys, scope) => {
        const q = parseStatisticsQuery({
          filter,
          aggregate: [
            {
              group: {
                keys: keys.map((k) => ({ key: k, name: k.replace('.', '_') })),
                fields: [
                  { name: 'n', operator: 'count' },
                  { name: 'total', key: 'cost', operator: 'sum' },
                  { name: 'lo', key: 'cpu', operator: 'min' },
                  { name: 'hi', key: 'name', operator: 'max' },
                  { name: 'big', operator: 'count', conditions: [{ key: 'instance_size', value: 2, operator: 'gte' }] },
                ],
              },
            },
          ],
        });
        const got = (await runStat(db.pool, resource, q, scope, { now: NOW })).results as Record<string, unknown>[];
        const docs = evalFilter(resource, DOCS, { filter }, scope, NOW);
        const groups = new Map<string, Doc[]>();
        for (const d of docs) {
          const k = JSON.stringify(keys.map((key) => {
            const [a, b] = key.split('.');
            const v = b ? (d[a] as Record<string, unknown> | null)?.[b] : d[a];
            return v ?? null;
          }));
          groups.set(k, [...(groups.get(k) ?? []), d]);
        }
        const want = [...groups.entries()].map(([k, ds]) => {
          const out: Record<string, unknown> = {};
          (JSON.parse(k) as unknown[]).forEach((v, i) => (out[keys[i].replace('.', '_')] = v));
          const nums = (f: string) => ds.map((d) => d[f]).filter((v): v is number => typeof v === 'number');
          out.n = ds.length;
          out.total = nums('cost').reduce((a, b) => a + b, 0);
          out.lo = nums('cpu').length ? Math.min(...nums('cpu')) : null;
          const names = ds.map((d) => d.name).filter((v): v is string => typeof v === 'string').sort(cmpScalar);
          out.hi = names.length ? names[names.length - 1] : null;
          out.big = ds.filter((d) => typeof d.instance_size === 'number' && d.instance_size >= 2).length;
          return out;
        });
        const norm = (rows: Record<string, unknown>[]) =>
          rows
            .map((r): Record<string, unknown> => ({ ...r, total: Math.round((r.total as number) * 1000) / 1000 }))
            .map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, r[k]])))
            .sort();
        expect(norm(got)).toEqual(norm(want));
      },
    ),
    { numRuns: 150 },
  );
});
