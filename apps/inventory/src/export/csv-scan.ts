import { CSV_FORMULA_TRIGGERS, csvQuote, csvSafeText } from '@platform/core';
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

/**
 * Whether the row buf[start..end) (fields separated by commas, without the line end) needs no
 * rewriting: no field `f` with `scan[f]` starts with a byte of SLOW_FIRST (after its opening quote).
 */
export function rowIsSafe(buf: Buffer, start: number, end: number, scan: readonly boolean[]): boolean {
  let i = start;
  for (let f = 0; f < scan.length; f++) {
    if (scan[f] && i < end) {
      const c = buf[i];
      if (c === 0x22 ? SLOW_FIRST[buf[i + 1]] === 1 : c !== 0x2c && SLOW_FIRST[c] === 1) return false;
    }
    i = fieldEnd(buf, i, end) + 1;
  }
  return true;
}

/** The row buf[start..end) with its `scan` fields rewritten by guardedField (others kept), and CRLF. */
export function guardedRow(buf: Buffer, start: number, end: number, scan: readonly boolean[]): string {
  const out: string[] = new Array(scan.length);
  let i = start;
  for (let f = 0; f < scan.length; f++) {
    const j = fieldEnd(buf, i, end);
    out[f] = scan[f] ? guardedField(fieldText(buf, i, j)) : buf.toString('utf8', i, j);
    i = j + 1;
  }
  return `${out.join(',')}\r\n`;
}
