import { EventEmitter } from 'node:events';
import type { Connection } from 'pg';
import { csvLine } from '@platform/core';
import { ByteBatcher, CopyOut, csvRowWriter } from './copy-out';
import { SLOW_FIRST, rowInto, writeRow } from './csv-scan';
import { SCAN_JSON, SCAN_LIST, SCAN_NONE, SCAN_TEXT } from './scan-kinds';
import { JS_WHITESPACE } from './csv-sql';
import { csvCell } from './format';

/**
 * The formula guard applied by Node to the bytes COPY writes (csv-scan.ts), against csvLine of the same
 * values (what the export wrote before, and what csv-sql.spec.ts compares with real COPY output), fed
 * to the COPY reader in chunks split at every offset. COPY's CSV field is written here as PostgreSQL
 * writes it: NULL empty, '' as `""`, quoted when it holds a comma, quote, CR or LF.
 */

const copyField = (v: string | null) => (v === null ? '' : v === '' || /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

const HOSTILE: (string | null)[] = [
  null, '', ' ', '  ', 'x', 'plain', '=1+2', '+cmd|calc', '-2+3', '-', '-5', '@SUM(A1)', '\t=1', '\r=1', '\n=1', '\r\n', ' =x', "'=x",
  'a,b', ',a', '"', '""', '"=x"', 'say "hi", ok', 'line1\nline2', 'cr\rlf', '\u00a0', '\u00a0x', '\u3000', '\ufeff', '\ufeffx', '\u2028', '\u0085',
  '\u0085x', '한글', '=한글', '😀', 'x\u0001y', '\u0001', '\\.', '\\', '2024-01-01 00:00:00', '=' + 'a,"\n'.repeat(3000), 'b'.repeat(70_000),
];

/** A COPY row of csvCopySelect: the empty first field, then the cells; `scan` cells are plain strings. */
const copyRow = (values: (string | null)[]) => `,${values.map(copyField).join(',')}\n`;
const want = (values: (string | null)[]) => csvLine(values.map((v) => csvCell(v, {})));

/** CopyData messages of `rows`, as PostgreSQL sends them (one per row), then CopyDone. */
function messages(rows: string[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of rows) {
    const body = Buffer.from(r, 'utf8');
    const head = Buffer.alloc(5);
    head[0] = 0x64;
    head.writeUInt32BE(4 + body.length, 1);
    parts.push(head, body);
  }
  parts.push(Buffer.from([0x63, 0, 0, 0, 4])); // CopyDone: handed back to pg
  return Buffer.concat(parts);
}

/** Feeds `bytes` to a CopyOut in pieces cut at `cuts`; answers the CSV written and what reached pg. */
async function feed(bytes: Buffer, cuts: number[], scan: number[]) {
  const chunks: Buffer[] = [];
  const out = new ByteBatcher(async (b) => void chunks.push(Buffer.from(b)), { busy: () => {}, idle: () => {}, error: (e) => { throw e; } });
  const copy = new CopyOut('COPY', csvRowWriter(out, () => { throw new Error('no row goes to Node here'); }, scan));
  const stream = new EventEmitter();
  const handedBack: Buffer[] = [];
  stream.on('data', (b: Buffer) => handedBack.push(b));
  copy.submit({ query: () => {}, stream } as unknown as Connection);
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    stream.emit('data', bytes.subarray(at, cut));
    at = cut;
  }
  await out.finish();
  return { csv: Buffer.concat(chunks).toString('utf8'), pg: Buffer.concat(handedBack) };
}

/** The line writeRow writes for a COPY row (its line end excluded). */
function writeRowLine(row: Buffer, scan: number[]): string {
  const chunks: Buffer[] = [];
  const out = new ByteBatcher(async (b) => void chunks.push(Buffer.from(b)), { busy: () => {}, idle: () => {}, error: () => {} });
  writeRow(out, row, 1, row.length - 1, scan);
  void out.finish();
  return Buffer.concat(chunks).toString('utf8');
}

/** What rowInto answers for a COPY row: the line, or null (-1); it never writes past its room. */
function rowIntoLine(row: Buffer, scan: number[]): string | null {
  const room = row.length - 2 + 2;
  const dst = Buffer.alloc(3 + room + 8, 0xee);
  const pos = rowInto(dst, 3, row, 1, row.length - 1, scan);
  expect(dst.subarray(3 + room).every((b) => b === 0xee) && dst.subarray(0, 3).every((b) => b === 0xee)).toBe(true);
  return pos < 0 ? null : dst.toString('utf8', 3, pos);
}

/**
 * The line written for a COPY row (its line end excluded), checked three ways: writeRow; rowInto, which
 * answers the same line or declines (only when writeRow rewrites a field); and the row writer, with
 * the fields after the last scanned one left out of `scan`.
 */
function lineOf(row: Buffer, scan: number[]): string {
  const line = writeRowLine(row, scan);
  const fast = rowIntoLine(row, scan);
  if (fast !== null) expect(fast).toBe(line);
  else expect(scan.some((k) => k !== SCAN_NONE)).toBe(true);
  let n = scan.length;
  while (n > 0 && scan[n - 1] === SCAN_NONE) n--;
  const trimmed = rowIntoLine(row, scan.slice(0, n));
  expect(trimmed).toBe(n > 0 ? fast : line);
  expect(writeRowLine(row, scan.slice(0, n))).toBe(line);
  return line;
}

describe('Node applies the formula guard to the bytes COPY writes', () => {
  test('each hostile cell, in every column position, beside others, as csvLine writes it', () => {
    for (const v of HOSTILE) {
      for (const [values, scan] of [
        [[v], [true]],
        [['a', v, 'b'], [true, true, true]],
        [[v, '=kept as COPY wrote it', v], [true, false, true]],
        [[v, v], [true, true]],
      ] as [(string | null)[], boolean[]][]) {
        const row = Buffer.from(copyRow(values));
        const line = lineOf(row, scan.map((x) => (x ? SCAN_TEXT : SCAN_NONE)));
        // A field not scanned keeps COPY's bytes (there, SQL computed the guarded text).
        const expected = want(values.map((x, k) => (scan[k] ? x : 'X'))).split(',X,').join(',=kept as COPY wrote it,');
        expect([values, line]).toEqual([values, expected]);
      }
    }
  });

  test('the table: a first byte passes only when no text starting with it can be blank or start a formula', () => {
    for (let c = 0; c < 256; c++) {
      if (SLOW_FIRST[c]) continue;
      expect(c > 32 && !'=+-@"'.includes(String.fromCharCode(c))).toBe(true);
    }
    for (const ch of JS_WHITESPACE) expect(SLOW_FIRST[Buffer.from(ch)[0]]).toBe(1);
    // Common first bytes pass (they cost one table read).
    for (const ch of 'aZ09_.(\'{[#/') expect(SLOW_FIRST[ch.charCodeAt(0)]).toBe(0);
  });

  test('rows split across reads at every offset give the same file, and the message after the rows goes back to pg', async () => {
    const rows = [['a', 'b'], ...HOSTILE.filter((v) => v === null || v.length < 100).map((v, i) => [v, HOSTILE[(i + 7) % 40]]), ['z', '=end']];
    const bytes = messages(rows.map(copyRow));
    const expected = rows.map(want).join('');
    expect((await feed(bytes, [], [SCAN_TEXT, SCAN_TEXT])).csv).toBe(expected);
    for (let cut = 1; cut < bytes.length; cut++) {
      const r = await feed(bytes, [cut], [SCAN_TEXT, SCAN_TEXT]);
      if (r.csv !== expected || !r.pg.equals(Buffer.from([0x63, 0, 0, 0, 4]))) throw new Error(`cut at ${cut}`);
    }
    // Several cuts: every byte a read of its own.
    const all = await feed(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1), [SCAN_TEXT, SCAN_TEXT]);
    expect(all.csv).toBe(expected);
  });

  test('very long cells spanning many reads', async () => {
    const rows = HOSTILE.filter((v) => v !== null && v.length > 1000).map((v) => [v, 'x', v]);
    const bytes = messages(rows.map(copyRow));
    const expected = rows.map(want).join('');
    for (const step of [1000, 4096, 65_536]) {
      const cuts = Array.from({ length: Math.floor((bytes.length - 1) / step) }, (_, i) => (i + 1) * step);
      expect((await feed(bytes, cuts, [SCAN_TEXT, SCAN_TEXT, SCAN_TEXT])).csv).toBe(expected);
    }
  });

  test('JSON cells: a field starting with HARD (after an opening quote) is the value\'s JSON, written as csvLine writes the value; any other is kept', async () => {
    const values: unknown[] = [
      '=1+2', '+x', '-2', '@x', '\tx', '\rx', ' ', '', 'a,b', 'say "hi"', 'a\nb', '\u0001', -5, 1.5, 1e21, 0, true, false, null, {}, { a: [1, '=x'] }, [], ['=x', 2],
    ];
    for (const v of values) {
      // As PostgreSQL writes the value's jsonb text (its own spacing: JSON.parse reads either).
      const marked = copyField(`\u0001${JSON.stringify(v, null, 1)}`);
      const cell = csvLine([csvCell(v, {})]).slice(0, -2);
      for (const [row, scan, expected] of [
        [`,${marked}\n`, [SCAN_JSON], `${cell}\r\n`],
        [`,${marked},"=kept",${marked}\n`, [SCAN_JSON, SCAN_JSON, SCAN_JSON], `${cell},"=kept",${cell}\r\n`],
        [`,"=kept as COPY wrote it",${marked},x\n`, [SCAN_JSON, SCAN_JSON, SCAN_TEXT], `"=kept as COPY wrote it",${cell},x\r\n`],
        [`,${marked},x,${marked}\n`, [SCAN_JSON, SCAN_NONE, SCAN_NONE], `${cell},x,${marked}\r\n`],
      ] as [string, number[], string][]) {
        expect([v, lineOf(Buffer.from(row), scan)]).toEqual([v, expected]);
      }
    }
    // Texts COPY wrote as they are (JSON_FAST_FIRST first), unquoted or quoted, are kept byte for byte.
    for (const t of ['RUNNING', 'a,b', '"q"', 'x\u0001']) expect(lineOf(Buffer.from(`,${copyField(t)}\n`), [SCAN_JSON])).toBe(`${copyField(t)}\r\n`);
    // Split across reads, beside text cells.
    const rows = values.map((v, i) => `,${copyField(`\u0001${JSON.stringify(v)}`)},t${i}\n`);
    const bytes = messages(rows);
    const expected = values.map((v, i) => csvLine([csvCell(v, {}), `t${i}`])).join('');
    for (let cut = 1; cut < bytes.length; cut += 7) expect((await feed(bytes, [cut], [SCAN_JSON, SCAN_TEXT])).csv).toBe(expected);
  });

  test('text arrays: COPY writes their literal (as array_out does, here), Node joins the elements one per line as csvLine writes the list', () => {
    const lists: (string | null)[][] = [
      [], ['a'], ['a', 'b'], ['10.0.0.1', '54.1.0.7', 'x'], [''], [' '], [null], ['a', null], [null, 'a'], ['NULL'], ['null', 'x'], ['nullx'], ['a', ''],
      ['=x'], ['a', '=x'], ['-1', '2'], ['@'], ['a,b'], ['say "hi"'], ['a\nb'], ['a\\b'], ['{x}'], ['\u00a0', 'a'], ['한', '글'], ['a b'], ['\t'],
    ];
    const literal = (l: (string | null)[]) =>
      `{${l.map((e) => (e === null ? 'NULL' : e === '' || /[{}",\\\s]/.test(e) || e.toLowerCase() === 'null' ? `"${e.replace(/["\\]/g, (c) => `\\${c}`)}"` : e)).join(',')}}`;
    for (const l of lists) {
      const row = Buffer.from(`,${copyField(literal(l))},${copyField('=t')}\n`);
      expect([l, lineOf(row, [SCAN_LIST, SCAN_TEXT])]).toEqual([l, csvLine([csvCell(l, {}), csvCell('=t', {})])]);
    }
    // A literal with bounds or of two dimensions goes to pg's parser, as the raw values do.
    expect(lineOf(Buffer.from(`,${copyField("[0:1]={a,b}")}\n`), [SCAN_LIST])).toBe(csvLine([csvCell(['a', 'b'], {})]));
  });
});
