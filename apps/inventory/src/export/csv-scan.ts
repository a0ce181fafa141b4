import { types } from 'pg';
import { CSV_FORMULA_TRIGGERS, csvField, csvQuote, csvSafeText } from '@platform/core';
import { csvCell } from './format';
import { SCAN_JSON, SCAN_LIST, SCAN_TEXT } from './scan-kinds';
import { JS_WHITESPACE } from './csv-sql';

/**
 * The formula guard of plain text cells, applied by Node to the bytes PostgreSQL's COPY writes
 * (docs/decisions/inventory.md, "Export speed"). A plain string or timestamp cell is copied by
 * PostgreSQL as it is; Node looks at the first byte of each such field as it copies the row (a
 * 256-entry table), and rewrites only the rare field whose text may need the guard's quote or is blank:
 * its text is then decoded and written as csvLine writes it (blank: empty; a trigger first: `'` before).
 *
 * COPY's CSV quoting is csvQuote's (a field with a comma, quote, CR or LF is quoted, quotes doubled),
 * but for the empty string, which COPY writes `""` (NULL is the empty field): a quoted field whose text
 * starts with a quote, or is empty, is rewritten too.
 */

/** First bytes after which a text may need the guard or be blank: controls, space, triggers, `"`, lead bytes of wide blanks. */
export const SLOW_FIRST = (() => {
  const t = new Uint8Array(256);
  for (let c = 0; c <= 32; c++) t[c] = 1;
  for (const ch of CSV_FORMULA_TRIGGERS) t[ch.charCodeAt(0)] = 1;
  t[0x22] = 1;
  for (const ch of JS_WHITESPACE) t[Buffer.from(ch, 'utf8')[0]] = 1;
  return t;
})();

/**
 * The end of the CSV field that starts at `i` (before `end`): the index of the comma after it, or `end`.
 * A quoted field ends at its closing quote (doubled quotes inside are text).
 */
export function fieldEnd(buf: Buffer, i: number, end: number): number {
  if (i < end && buf[i] === 0x22) {
    for (let j = i + 1; j < end; j++) {
      if (buf[j] === 0x22) {
        if (j + 1 < end && buf[j + 1] === 0x22) j++;
        else return j + 1;
      }
    }
    throw new Error('unterminated CSV field');
  }
  for (let j = i; j < end; j++) if (buf[j] === 0x2c) return j;
  return end;
}

/** The text of the CSV field buf[i..j) (quoted: quotes removed, doubled quotes made one). */
export function fieldText(buf: Buffer, i: number, j: number): string {
  if (j > i && buf[i] === 0x22) return buf.toString('utf8', i + 1, j - 1).replace(/""/g, '"');
  return buf.toString('utf8', i, j);
}

/** A plain text cell as csvLine writes it: blank (as trim sees it) is empty, else guarded and quoted. */
export function guardedField(text: string): string {
  return text.trim() === '' ? '' : csvQuote(csvSafeText(text));
}

/** Where a row is written (copy-out.ts's ByteBatcher). */
export interface RowOut {
  /** Bytes `start`..`end` of `src`. */
  bytes(src: Buffer, start: number, end: number): void;
  /** Bytes `start`..`end` of `src`, then CRLF. */
  line(src: Buffer, start: number, end: number): void;
  text(s: string): void;
  /** Lets `fill` write up to `n` bytes at `pos` of `dst`, answering the new position, or -1 to write nothing. */
  put(n: number, fill: (dst: Buffer, pos: number) => number): boolean;
}

/**
 * A plain JSON cell that COPY left to Node, from its field's text: HARD (\u0001) then the value's JSON
 * (export/csv-sql.ts, jsonByNode), written as csvLine writes the value (a typed number unguarded).
 */
export function jsonField(text: string): string {
  return csvField(csvCell(JSON.parse(text.slice(1)), {}));
}

const parseTextArray = (types.getTypeParser as (oid: number, format: 'text') => (text: string) => unknown)(1009, 'text'); // text[]

/** A plain text array cell as csvLine writes it, from its array literal (as pg parses it for the raw values). */
export function listField(literal: string): string {
  return csvField(csvCell(parseTextArray(literal), {}));
}

/** Whether src[i..i+4) spells NULL (any case) and ends an element (a comma or the closing brace next). */
const isNull = (src: Buffer, i: number) =>
  (src[i] | 0x20) === 0x6e && (src[i + 1] | 0x20) === 0x75 && (src[i + 2] | 0x20) === 0x6c && (src[i + 3] | 0x20) === 0x6c && (src[i + 4] === 0x2c || src[i + 4] === 0x7d);

/**
 * The cell of a plain text array from the CSV field src[i..j) holding its array literal, written at
 * `pos` of `dst` (room for j - i + 2 bytes): its elements one per line, quoted when there are several,
 * answering the new position. Only simple literals (`{a,b}`: one dimension, no quoted or NULL element,
 * no element starting with a byte of SLOW_FIRST): otherwise -1 and nothing is meant to be written.
 * Unquoted, an element holds no comma, quote, backslash, brace or ASCII blank (PostgreSQL's array_out
 * quotes those), so the joined text needs CSV quotes exactly when it holds a line break.
 */
export function listInto(dst: Buffer, pos: number, src: Buffer, i: number, j: number): number {
  const quoted = src[i] === 0x22; // COPY quotes the literal when it holds a comma (or a quote, refused below)
  const a = quoted ? i + 1 : i;
  const b = quoted ? j - 1 : j;
  if (b - a < 2 || src[a] !== 0x7b || src[b - 1] !== 0x7d) return -1;
  if (b - a === 2) return pos; // {}: no element, an empty cell
  if (quoted) dst[pos++] = 0x22;
  let first = true;
  for (let k = a + 1; k < b - 1; k++) {
    const c = src[k];
    if (first) {
      if (SLOW_FIRST[c] === 1 || c === 0x7b || c === 0x2c || c === 0x7d || isNull(src, k)) return -1;
      first = false;
    }
    if (c === 0x2c) {
      dst[pos++] = 0x0a;
      first = true;
    } else if (c === 0x22 || c === 0x5c || c === 0x7b || c === 0x7d) {
      return -1;
    } else {
      dst[pos++] = c;
    }
  }
  if (first) return -1;
  if (quoted) dst[pos++] = 0x22;
  return pos;
}

/**
 * The CSV line (CRLF) of the row src[start..end) written at `pos` of `dst` (room for end - start + 2
 * bytes), answering the new position; or -1, nothing meant to be written, when a field needs more
 * than the common case: a SCAN_TEXT field whose first byte is in SLOW_FIRST, a SCAN_JSON field left to
 * Node (HARD first), or a SCAN_LIST literal that listInto does not join. The line is then what writeRow writes. One pass: each byte of the
 * scanned fields is copied as it is read (a row is ~150 bytes; the native copy and field-end calls of
 * writeRow cost more per row, measured: docs/decisions/performance.md); the fields after the last one
 * `scan` names are copied in one block.
 */
export function rowInto(dst: Buffer, pos: number, src: Buffer, start: number, end: number, scan: readonly number[]): number {
  let i = start;
  for (let f = 0; f < scan.length; f++) {
    if (f > 0) dst[pos++] = 0x2c;
    const kind = scan[f];
    if (kind === SCAN_LIST) {
      const j = fieldEnd(src, i, end);
      if (j > i) pos = listInto(dst, pos, src, i, j); // empty: NULL, an empty cell
      if (pos < 0) return -1;
      i = j + 1;
      continue;
    }
    let c = src[i];
    if (i < end && c === 0x22) {
      if (kind === SCAN_TEXT ? SLOW_FIRST[src[i + 1]] === 1 : kind === SCAN_JSON && src[i + 1] === 0x01) return -1;
      // A quoted field: to its closing quote (a doubled quote is text).
      dst[pos++] = c;
      for (i++; ; i++) {
        if (i >= end) throw new Error('unterminated CSV field');
        c = src[i];
        dst[pos++] = c;
        if (c === 0x22) {
          if (i + 1 < end && src[i + 1] === 0x22) dst[pos++] = src[++i];
          else break;
        }
      }
      i += 2; // the closing quote and the comma
      continue;
    }
    if (i < end && (kind === SCAN_TEXT ? SLOW_FIRST[c] === 1 : kind === SCAN_JSON && c === 0x01)) return -1;
    for (; i < end; i++) {
      c = src[i];
      if (c === 0x2c) break;
      dst[pos++] = c;
    }
    i++;
  }
  // Fields after the last one `scan` names: as they are.
  if (scan.length === 0) pos += src.copy(dst, pos, start, end);
  else if (i <= end) {
    dst[pos++] = 0x2c;
    pos += src.copy(dst, pos, i, end);
  }
  dst[pos++] = 13;
  dst[pos++] = 10;
  return pos;
}

/**
 * Writes the CSV line (CRLF) of the row buf[start..end) (fields separated by commas, without the line
 * end) to `out`, each field `f` as `scan[f]` says: SCAN_NONE as COPY wrote it; SCAN_TEXT as it is unless
 * its first byte (after an opening quote) is in SLOW_FIRST, then rewritten by guardedField; SCAN_JSON as
 * it is unless HARD first, then jsonField; SCAN_LIST joined by listInto, or listField when the literal is
 * not simple. Bytes kept are copied in blocks.
 */
export function writeRow(out: RowOut, buf: Buffer, start: number, end: number, scan: readonly number[]) {
  let from = start;
  let i = start;
  for (let f = 0; f < scan.length; f++) {
    const j = fieldEnd(buf, i, end);
    const kind = scan[f];
    if (kind === SCAN_TEXT) {
      if (i < j && SLOW_FIRST[buf[i] === 0x22 ? buf[i + 1] : buf[i]] === 1) {
        out.bytes(buf, from, i);
        out.text(guardedField(fieldText(buf, i, j)));
        from = j;
      }
    } else if (kind === SCAN_JSON) {
      if (i < j && (buf[i] === 0x22 ? buf[i + 1] : buf[i]) === 0x01) {
        out.bytes(buf, from, i);
        out.text(jsonField(fieldText(buf, i, j)));
        from = j;
      }
    } else if (kind === SCAN_LIST) {
      out.bytes(buf, from, i);
      if (!out.put(j - i + 2, (dst, pos) => listInto(dst, pos, buf, i, j))) out.text(listField(fieldText(buf, i, j)));
      from = j;
    }
    i = j + 1;
  }
  out.line(buf, from, end);
}
