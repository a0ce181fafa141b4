import { csvSafeSql } from '@platform/core';
import type { FieldType } from '@platform/query';
import { cellText, type CellOptions } from './format';

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
 * before a typed number: csvSafeSql, the rule of @platform/core's csvLine), in an outer level.
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

/** SQL of the raw value of cell k in `alias` (what Node formats): a path's value, or the column. */
function rawOf(c: ExportCell, k: number, alias: string, p: Param) {
  return c.kind === 'json' && c.path && c.path.length > 0 ? `(${alias}.r${k} #> ${p(c.path, 'text[]')})` : `${alias}.r${k}`;
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

/**
 * The SELECT for `COPY (...) TO STDOUT WITH (FORMAT csv)` of `copyable` cells: per row a first column,
 * NULL (an empty field) unless a value is left to Node, then it is the JSON array of the row's raw
 * values; then one column per cell, its text.
 */
export function csvCopySelect(rows: string, cells: ExportCell[], param: Param): string {
  const p = onceParams(param);
  const plain = (c: ExportCell) => !c.opts.prefix && !c.opts.postfix && cellText(null, c.opts) === '';
  // Level 1 (y): the values, each computed once.
  const values: string[] = [];
  cells.forEach((c, k) => {
    values.push(`${c.sql} AS r${k}`);
    if (c.kind === 'json') values.push(`(${c.sql} #>> ${c.path && c.path.length > 0 ? p(c.path, 'text[]') : "'{}'"}) AS s${k}`);
    if (c.kind === 'string_array' && plain(c)) values.push(`array_to_string(${c.sql}, E'\\n') AS n${k}`);
  });
  const level1 = `SELECT ${values.join(', ')} FROM (${rows}) AS x OFFSET 0`;

  // Level 2: each cell's text, the plain one when a cheap test (`fast`) shows it is right; and the
  // first column, for a row with a value left to Node (only JSON values and numbers can be).
  const parts = cells.map((c, k) => {
    const exact = new Exact(c.opts, p);
    const value = exact.of(c.kind, c.kind === 'json' ? rawOf(c, k, 'y', p) : `y.r${k}`, `y.s${k}`);
    const hard = (v: string) => (c.kind === 'json' || c.kind === 'number' ? `${v} = ${HARD_SQL}` : null);
    const fast = plain(c) ? fastText(c, k, p) : null;
    if (!fast) return { text: value, hard: hard(`(${value})`) };
    if (fast.when === null) return { text: fast.text, hard: null };
    // The exact text, and its test, only where the cheap test fails.
    return { text: `CASE WHEN ${fast.when} THEN ${fast.text} ELSE ${value} END`, hard: hard(`CASE WHEN ${fast.when} THEN '' ELSE ${value} END`) };
  });
  const hard = parts.map((x) => x.hard).filter(Boolean);
  const raw = `json_build_array(${cells.map((c, k) => rawOf(c, k, 'y', p)).join(', ')})::text`;
  const first = hard.length ? `CASE WHEN ${hard.join(' OR ')} THEN ${raw} END` : 'NULL::text';
  // Whether a cell's text is a typed number's, as csvCell (export/format.ts) keeps it a number: a
  // number column's value or a JSON number, without prefix or postfix. Only asked of a text that
  // begins with '-' (a JSON value's text is tested first, the cheap way).
  const numeric = cells.map((c, k) => {
    if (c.opts.prefix || c.opts.postfix) return null;
    if (c.kind === 'number' || c.kind === 'integer') return `y.r${k} IS NOT NULL`;
    if (c.kind === 'json') return `CASE WHEN ascii(y.s${k}) = 45 THEN jsonb_typeof(${rawOf(c, k, 'y', p)}) = 'number' ELSE FALSE END`;
    return null;
  });
  const level2 = [`${first} AS h`, ...parts.map((x, k) => `${x.text} AS c${k}`), ...numeric.flatMap((m, k) => (m ? [`${m} AS m${k}`] : []))];
  // Level 3: the formula guard on each cell's text (@platform/core's csvSafeSql, the rule csvLine
  // applies in Node), over the texts computed once (OFFSET 0: not folded into level 2).
  const guarded = cells.map((_c, k) => csvSafeSql(`z.c${k}`, numeric[k] ? `z.m${k}` : undefined));
  return `SELECT z.h, ${guarded.join(', ')} FROM (SELECT ${level2.join(', ')} FROM (${level1}) AS y OFFSET 0) AS z`;
}

/** The plain text of a cell of a plain field (`text`) and when it is right (`when`, null: always), in level 1 (`y`). */
function fastText(c: ExportCell, k: number, p: Param): { text: string; when: string | null } | null {
  const first = (x: string) => `ascii(${x})`;
  switch (c.kind) {
    case 'string': // printable ASCII first: not blank
      return { text: `y.r${k}`, when: `${first(`y.r${k}`)} BETWEEN 33 AND ${FIRST_WIDE_WS - 1}` };
    case 'datetime':
      return { text: `y.r${k}`, when: null };
    case 'json': {
      // A letter or punctuation first: a string or true/false (not '-', a digit, '[' or '{': maybe a number, array, object).
      const f = first(`y.s${k}`);
      return {
        text: `y.s${k}`,
        when: `(${f} BETWEEN 58 AND 90 OR ${f} BETWEEN 97 AND 122 OR ${f} IN (33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 92, 93, 94, 95, 96, 124, 125, 126))`,
      };
    }
    case 'string_array': {
      // The elements one per line, when no line is empty or starts with other than printable ASCII
      // (so no element is blank; an element holding a line break may look suspect: it takes the exact way).
      const suspect = p(`(?:^|\n)(?:[^!-~]|$)`, 'text');
      return { text: `nullif(y.n${k}, '')`, when: `(y.n${k} = '' OR y.n${k} !~ ${suspect})` };
    }
    default:
      return null;
  }
}
