import { CSV_FORMULA_TRIGGERS, csvSafeSql } from '@platform/core';
import type { FieldType } from '@platform/query';
import { cellText, type CellOptions } from './format';
import { SCAN_JSON, SCAN_LIST, SCAN_NONE, SCAN_TEXT } from './scan-kinds';

/**
 * The SQL of a CSV export run as `COPY (...) TO STDOUT WITH (FORMAT csv)`: PostgreSQL computes each
 * cell's text and quotes it (COPY's CSV quoting is RFC 4180's, as export/csv.ts writes it: a field
 * with a comma, quote or line break is quoted, quotes doubled), so a row costs Node one buffer copy.
 *
 * Each cell's text is what `cellText` gives in Node, byte for byte. A cheap test takes the common
 * case (a text that does not start with a blank; a JSON value that is a string or true/false); the
 * rest goes through exact SQL (blanks showing the default, prefix/postfix, arrays element by element,
 * number formatting). A value even that does not reproduce (an object, which JSON.stringify prints in
 * its own key order and spacing; a nested array; a number JavaScript prints with an exponent) marks
 * its row: the row's first column then carries its raw values as JSON and Node formats it as before.
 * Tests compare both on hard values (export/csv-sql.spec.ts).
 *
 * Each text then passes the formula guard (a `'` before a text beginning with = + - @ tab or CR, not
 * before a typed number: csvSafeSql, the rule of @platform/core's csvLine), in an outer level; but a
 * plain string or timestamp cell (scannedByNode) is the value as it is, and Node applies the guard and
 * blanks on its bytes (export/csv-scan.ts), which saves the backend a test per cell; a plain JSON cell
 * (jsonByNode) is its text after one test, or else its value's JSON for Node to format.
 *
 * COPY writes '' as `""` (to tell it from NULL), so an empty text is written as NULL. Every value from
 * a request (prefix, postfix, default, time zone, paths) is a bind parameter (see copy-out.ts).
 */

/** The characters String.prototype.trim removes, as this runtime knows them (none lie outside the BMP). */
export const JS_WHITESPACE = (() => {
  let s = '';
  for (let c = 0; c <= 0xffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    if (ch.trim() === '') s += ch;
  }
  return s;
})();

/** The first whitespace code point above ASCII space: below it, printable ASCII is never blank. */
const FIRST_WIDE_WS = Math.min(...[...JS_WHITESPACE].map((ch) => ch.codePointAt(0)!).filter((n) => n > 32));

/** The value of a cell that SQL does not reproduce (any text equal to it is also left to Node). */
export const HARD = '\u0001';
const HARD_SQL = "E'\\x01'";

/** Adds a bind parameter, answering its placeholder with the cast. */
export type Param = (value: unknown, cast: string) => string;

/** One column of an export as the statement reads it. */
export interface ExportCell {
  /** Field type of the value: `json` for a path below a json column. Number columns are double precision. */
  kind: FieldType;
  /** SQL of the value in the rows (aliased `x`): a column, or for datetimes the formatted text. */
  sql: string;
  /** For `json`: the path below the column (empty for the whole value). */
  path?: string[];
  opts: CellOptions;
  /** Formatted in Node only (project names, unwound arrays). */
  nodeOnly?: boolean;
}

const COPY_KINDS: readonly FieldType[] = ['string', 'datetime', 'integer', 'number', 'boolean', 'string_array', 'json'];

/** Whether PostgreSQL can write these cells (else every row is formatted in Node). */
export const copyable = (cells: ExportCell[]) => cells.every((c) => !c.nodeOnly && c.opts.type !== 'size' && COPY_KINDS.includes(c.kind));

/**
 * PostgreSQL's float8 text of `f` where it is JavaScript's String(number), else HARD. Both print the
 * shortest digits that read back to the same double (extra_float_digits = 1, set by the export);
 * PostgreSQL uses exponent notation below 1e-4 and from 1e15, JavaScript below 1e-6 and from 1e21,
 * so between those the texts are equal. -0 is "0" in JavaScript; NaN and Infinity print the same
 * (PostgreSQL sorts NaN above Infinity).
 */
const floatText = (f: string) =>
  `CASE WHEN ${f} = 0 THEN '0' WHEN abs(${f}) >= '1e-4'::float8 AND abs(${f}) < '1e15'::float8 OR abs(${f}) >= 'Infinity'::float8 THEN (${f})::text ELSE ${HARD_SQL} END`;

/** The exact text of one cell of a field (its options), as cellText gives it; NULL for ''. */
class Exact {
  private readonly blank: string;
  private readonly affix: boolean;

  constructor(
    private readonly opts: CellOptions,
    private readonly param: Param,
  ) {
    this.blank = cellText(null, opts);
    this.affix = Boolean(opts.prefix || opts.postfix);
  }

  // Parameters are added when first used (PostgreSQL refuses a parameter the statement never mentions).
  /** The text of a blank value (NULL for ''). */
  private get blankText() {
    return this.blank === '' ? 'NULL::text' : this.param(this.blank, 'text');
  }
  /** Whether blank elements of a list are kept (their text is not blank itself). */
  private get blankKeep() {
    return this.blank.trim() !== '' ? 'TRUE' : 'FALSE';
  }
  private get ws() {
    return this.param(JS_WHITESPACE, 'text');
  }

  /** `s` (a non-null text) is blank as JavaScript's trim sees it; printable ASCII first is the fast no. */
  isBlank(s: string) {
    return `NOT (ascii(${s}) BETWEEN 33 AND ${FIRST_WIDE_WS - 1} OR btrim(${s}, ${this.ws}) <> '')`;
  }

  /** Text with prefix and postfix. */
  private affixed(t: string) {
    if (!this.affix) return t;
    const pre = this.opts.prefix ? `${this.param(this.opts.prefix, 'text')} || ` : '';
    const post = this.opts.postfix ? ` || ${this.param(this.opts.postfix, 'text')}` : '';
    return `(${pre}${t}${post})`;
  }

  /** With prefix and postfix, unless it is HARD. */
  private affixedOrHard(t: string) {
    return this.affix ? `CASE WHEN ${t} = ${HARD_SQL} THEN ${HARD_SQL} ELSE ${this.affixed(t)} END` : t;
  }

  /** A text value: blank (or NULL) shows the default. */
  private string(s: string) {
    return `CASE WHEN ${s} IS NULL OR ${this.isBlank(s)} THEN ${this.blankText} ELSE ${this.affixed(s)} END`;
  }

  /** A value never blank unless NULL, shown as text `t`. */
  private scalar(v: string, t: string) {
    return `CASE WHEN ${v} IS NULL THEN ${this.blankText} ELSE ${this.affixedOrHard(t)} END`;
  }

  /** A JSON number of numeric text `s`, read as JSON.parse does (correctly rounded to a double). */
  private jsonNumber(s: string) {
    // Below 300 characters a decimal can neither overflow nor underflow a double.
    return `CASE WHEN length(${s}) < 300 THEN ${floatText(`(${s})::float8`)} ELSE ${HARD_SQL} END`;
  }

  /**
   * Elements of a list, each shown as a value of its own, blank ones dropped, one per line. `elems`
   * is a FROM item of (e, o) with `t` the element's text (HARD, when `canBeHard`: left to Node) and
   * `blank` whether it shows the default.
   */
  private joined(elems: string, t: string, blank: string, canBeHard: boolean) {
    const inner = `SELECT ${t} AS t, ${blank} AS blank, o FROM ${elems} OFFSET 0`;
    const agg = `SELECT ${canBeHard ? `bool_or(NOT v.blank AND v.t = ${HARD_SQL})` : 'FALSE'} AS hard, string_agg(CASE WHEN v.blank THEN ${this.blankText} ELSE v.t END, E'\\n' ORDER BY v.o) FILTER (WHERE NOT v.blank OR ${this.blankKeep}) AS j FROM (${inner}) AS v`;
    return `(SELECT CASE WHEN w.hard THEN ${HARD_SQL} ELSE nullif(w.j, '') END FROM (${agg}) AS w)`;
  }

  /** A jsonb value `v` whose `#>> '{}'` text is `s`. */
  private json(v: string, s: string) {
    const es = `(a.e #>> '{}')`;
    const t = `CASE jsonb_typeof(a.e) WHEN 'string' THEN ${this.affixed(es)} WHEN 'number' THEN ${this.affixedOrHard(this.jsonNumber(es))} WHEN 'boolean' THEN ${this.affixed(es)} WHEN 'null' THEN '' ELSE ${HARD_SQL} END`;
    const blank = `(jsonb_typeof(a.e) = 'null' OR (jsonb_typeof(a.e) = 'string' AND ${this.isBlank(es)}))`;
    return `CASE coalesce(jsonb_typeof(${v}), 'null')
      WHEN 'string' THEN ${this.string(s)}
      WHEN 'number' THEN ${this.affixedOrHard(this.jsonNumber(s))}
      WHEN 'boolean' THEN ${this.affixed(s)}
      WHEN 'null' THEN ${this.blankText}
      WHEN 'array' THEN ${this.joined(`jsonb_array_elements(${v}) WITH ORDINALITY AS a(e, o)`, t, blank, true)}
      WHEN 'object' THEN CASE WHEN ${v} = '{}'::jsonb THEN ${this.affixed("'{}'")} ELSE ${HARD_SQL} END
    END`;
  }

  /** A text[] value. */
  private textArray(a: string) {
    const blank = `(a.e IS NULL OR ${this.isBlank('a.e')})`;
    return `CASE WHEN ${a} IS NULL THEN ${this.blankText} ELSE ${this.joined(`unnest(${a}) WITH ORDINALITY AS a(e, o)`, this.affixed('a.e'), blank, false)} END`;
  }

  /** The text of a value `v` of `kind` (for json, `s` is its `#>> '{}'` text). */
  of(kind: FieldType, v: string, s: string): string {
    switch (kind) {
      case 'string':
        return this.string(v);
      case 'datetime': // formatted `YYYY-MM-DD HH24:MI:SS` (or NULL for no value)
      case 'integer':
        return this.scalar(v, `(${v})::text`);
      case 'number':
        return this.scalar(v, floatText(v));
      case 'boolean':
        return this.scalar(v, `CASE WHEN ${v} THEN 'true' ELSE 'false' END`);
      case 'string_array':
        return this.textArray(v);
      default:
        return this.json(v, s);
    }
  }
}

/** Memoises parameters, so a value used by several cells is sent once. */
function onceParams(param: Param): Param {
  const added = new Map<string, string>();
  return (value, cast) => {
    const k = `${cast}:${JSON.stringify(value)}`;
    let ph = added.get(k);
    if (ph === undefined) added.set(k, (ph = param(value, cast)));
    return ph;
  };
}

/**
 * The operator and operand reading `path` below a jsonb value: one key with `->` / `->>` (a text key,
 * cheaper than the path form, which takes its array apart on every row), else `#>` / `#>>`. Both read
 * an object's key; on an array, `->` of a text key is NULL where `#>` takes the key as an index, so a
 * key that looks like an index keeps the path form.
 */
function jsonPath(path: string[], p: Param, one: '->' | '->>', many: '#>' | '#>>'): string {
  if (path.length === 1 && !/^\s*[+-]?[0-9]+\s*$/.test(path[0])) return `${one} ${p(path[0], 'text')}`;
  return `${many} ${p(path, 'text[]')}`;
}

/** SQL of the raw value of cell k in `alias` (what Node formats): a path's value, or the column. */
function rawOf(c: ExportCell, k: number, alias: string, p: Param) {
  if (c.kind !== 'json' || !c.path || c.path.length === 0) return `${alias}.r${k}`;
  return `(${alias}.r${k} ${jsonPath(c.path, p, '->', '#>')})`;
}

/**
 * The statement of a cursor reading each row's raw values (columns, datetime texts, JSON path values)
 * and `extra` (`{sql, name}`, e.g. the unwound element), for Node to format.
 */
export function rawSelect(rows: string, cells: ExportCell[], extra: { sql: string; name: string }[], param: Param): string {
  const p = onceParams(param);
  const values = [...cells.map((c, k) => `${c.sql} AS r${k}`), ...extra.map((e) => `${e.sql} AS ${e.name}`)];
  return `SELECT ${[...cells.map((c, k) => rawOf(c, k, 'y', p)), ...extra.map((e) => `y.${e.name}`)].join(', ')} FROM (SELECT ${values.join(', ')} FROM (${rows}) AS x) AS y`;
}

/** First characters after which a plain text is written as it is: no formula trigger, not blank. */
const TRIGGERS = CSV_FORMULA_TRIGGERS.map((ch) => ch.charCodeAt(0));
/**
 * First characters of a JSON value's `#>>` text that can only be a string or true/false, and not start a
 * formula: printable ASCII but digits, '-', '[' and '{' (a number, array, object) and the triggers.
 */
const JSON_FAST_FIRST = Array.from({ length: 94 }, (_, i) => i + 33).filter(
  (c) => !(c >= 48 && c <= 57) && ![45, 91, 123].includes(c) && !TRIGGERS.includes(c),
);
/** `ascii(x)` in (or not in) a constant set: nine values or more make PostgreSQL probe a hash table. */
const firstIn = (x: string, codes: number[], negate = false) => `ascii(${x}) ${negate ? '<> ALL' : '= ANY'}('{${codes.join(',')}}'::int[])`;

/** A field without prefix, postfix or a default that shows (a blank value is an empty cell). */
const plain = (c: ExportCell) => !c.opts.prefix && !c.opts.postfix && cellText(null, c.opts) === '';

/**
 * Whether the cell is a plain string or timestamp field, which COPY writes as its value and Node
 * guards (export/csv-scan.ts): its text is the value, or empty when blank (as trim sees it).
 */
export const scannedByNode = (c: ExportCell) => plain(c) && (c.kind === 'string' || c.kind === 'datetime');

/** Whether the cell is a plain text array field, which COPY writes as its array literal and Node joins (export/csv-scan.ts). */
export const listByNode = (c: ExportCell) => plain(c) && c.kind === 'string_array';

/**
 * Whether the cell is a plain JSON field: COPY writes its `->>` text when the first character shows a
 * string or true/false that starts no formula (JSON_FAST_FIRST: the text is the cell), else HARD and the
 * value's JSON, which Node formats (export/csv-scan.ts). One test per cell, and none for the row.
 */
export const jsonByNode = (c: ExportCell) => plain(c) && c.kind === 'json';

/** What Node does with each cell's field of a csvCopySelect row (export/csv-scan.ts). */
export const nodeScan = (cells: ExportCell[]) =>
  cells.map((c) => (scannedByNode(c) ? SCAN_TEXT : listByNode(c) ? SCAN_LIST : jsonByNode(c) ? SCAN_JSON : SCAN_NONE));

/**
 * The SELECT for `COPY (...) TO STDOUT WITH (FORMAT csv)` of `copyable` cells: per row a first column,
 * NULL (an empty field) unless a value is left to Node, then it is the JSON array of the row's raw
 * values; then one column per cell, its guarded text.
 *
 * Two levels: the values, each computed once (y); then each cell's text. A plain field's cell takes a
 * cheap test on its first character (`fast`): when it holds, the value's text is the cell as it is
 * (exact, and nothing for the formula guard to do); otherwise a sub-select computes the exact text
 * once and applies the guard (csvSafeSql). Most cells pass the test, so a row costs PostgreSQL one
 * function call and a hash probe per cell beside the plain SELECT (measured: docs/benchmarks.md).
 */
export function csvCopySelect(rows: string, cells: ExportCell[], param: Param): string {
  const p = onceParams(param);
  const values: string[] = [];
  cells.forEach((c, k) => {
    values.push(`${c.sql} AS r${k}`);
    if (c.kind === 'json') values.push(`(${c.sql} ${c.path && c.path.length > 0 ? jsonPath(c.path, p, '->>', '#>>') : "#>> '{}'"}) AS s${k}`);
    if (c.kind === 'string_array' && plain(c) && !listByNode(c)) values.push(`array_to_string(${c.sql}, E'\\n') AS n${k}`);
  });
  const level1 = `SELECT ${values.join(', ')} FROM (${rows}) AS x OFFSET 0`;

  const parts = cells.map((c, k) => {
    // Written as it is; Node applies the guard (export/csv-scan.ts).
    if (scannedByNode(c) || listByNode(c)) return { text: `y.r${k}`, hard: null };
    if (jsonByNode(c)) return { text: `CASE WHEN ${firstIn(`y.s${k}`, JSON_FAST_FIRST)} THEN y.s${k} ELSE ${HARD_SQL} || (${rawOf(c, k, 'y', p)})::text END`, hard: null };
    const exact = new Exact(c.opts, p).of(c.kind, c.kind === 'json' ? rawOf(c, k, 'y', p) : `y.r${k}`, `y.s${k}`);
    const numeric = numericOf(c, k, p);
    const guarded = `(SELECT ${csvSafeSql('e.t', numeric ? 'e.m' : undefined)} FROM (SELECT ${exact} AS t${numeric ? `, ${numeric} AS m` : ''}) AS e)`;
    // Only JSON values and float numbers can be left to Node (HARD).
    const canBeHard = c.kind === 'json' || c.kind === 'number';
    const fast = plain(c) ? fastText(c, k) : null;
    if (!fast) return { text: guarded, hard: canBeHard ? `${exact} = ${HARD_SQL}` : null };
    return {
      text: `CASE WHEN ${fast.when} THEN ${fast.text} ELSE ${guarded} END`,
      hard: canBeHard ? `CASE WHEN ${fast.when} THEN FALSE ELSE ${exact} = ${HARD_SQL} END` : null,
    };
  });
  const hard = parts.map((x) => x.hard).filter(Boolean);
  const raw = `json_build_array(${cells.map((c, k) => rawOf(c, k, 'y', p)).join(', ')})::text`;
  const first = hard.length ? `CASE WHEN ${hard.join(' OR ')} THEN ${raw} END` : 'NULL::text';
  return `SELECT ${first} AS h, ${parts.map((x) => x.text).join(', ')} FROM (${level1}) AS y`;
}

/**
 * Whether a cell's text is a typed number's, which the guard leaves as it is (csvCell in export/format.ts
 * keeps it a number): a number column's value or a JSON number, without prefix or postfix.
 */
function numericOf(c: ExportCell, k: number, p: Param): string | null {
  if (c.opts.prefix || c.opts.postfix) return null;
  if (c.kind === 'number' || c.kind === 'integer') return `y.r${k} IS NOT NULL`;
  if (c.kind === 'json') return `jsonb_typeof(${rawOf(c, k, 'y', p)}) = 'number'`;
  return null;
}

/**
 * The text of a cell of a plain field (`text`) and when it is the cell as it is (`when`): exact, and
 * not starting a formula. Read from level 1 (`y`). Plain strings, timestamps and text arrays never get
 * here: COPY writes their values and Node guards them (scannedByNode, listByNode), nor plain JSON
 * cells (jsonByNode).
 */
function fastText(c: ExportCell, k: number): { text: string; when: string } | null {
  const y = `y.r${k}`;
  switch (c.kind) {
    case 'integer': // a typed number: never guarded
      return { text: `(${y})::text`, when: `${y} IS NOT NULL` };
    case 'boolean':
      return { text: `CASE WHEN ${y} THEN 'true' ELSE 'false' END`, when: `${y} IS NOT NULL` };
    default:
      return null;
  }
}
