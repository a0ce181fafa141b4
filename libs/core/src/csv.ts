/**
 * The one place the platform's CSV rules live: RFC 4180 quoting and the neutralisation of spreadsheet
 * formulas (CSV injection, CWE-1236), for the cells Node writes (`csvField`, `csvLine`) and for the
 * cells PostgreSQL writes with `COPY ... TO STDOUT (FORMAT csv)` (`csvSafeSql`). Both give the same
 * bytes for the same values (inventory's export/csv-sql.spec.ts compares them).
 *
 * The rule (OWASP's): a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return would
 * be read by a spreadsheet as a formula (Excel, LibreOffice and Google Sheets also take `+`, `-` and
 * `@` as the start of one), so it is written with a single quote `'` before it: the spreadsheet shows
 * the text, with the quote. A typed number (a JavaScript number, not a string) is written as it is,
 * `-5` included: a spreadsheet reads a number as a number, and a column of numbers stays one. Only
 * finite numbers count: `-Infinity` is text. Decided in docs/decisions/security.md ("CSV injection").
 */

/** The characters that start a formula in a spreadsheet: `=`, `+`, `-`, `@`, tab, carriage return. */
export const CSV_FORMULA_TRIGGERS: readonly string[] = ['=', '+', '-', '@', '\t', '\r'];
const TRIGGER_CODES: readonly number[] = CSV_FORMULA_TRIGGERS.map((c) => c.charCodeAt(0));

/** A number's text that a spreadsheet reads as that number: `-` then a digit (a finite negative number). */
const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * The text of a cell as a spreadsheet may safely read it: `'` before a text that begins with a formula
 * character. `numeric`: the text is a typed number's (String(n) of a finite number), left as it is.
 */
export function csvSafeText(text: string, numeric = false): string {
  const c = text.charCodeAt(0);
  if (!TRIGGER_CODES.includes(c)) return text;
  if (numeric && c === 45 && isDigit(text.charCodeAt(1))) return text;
  return `'${text}`;
}

/** RFC 4180 quoting: a field with a comma, quote or line break is quoted, quotes doubled. */
export function csvQuote(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One CSV field: a string is neutralised (csvSafeText) and quoted; a finite number is written as
 * String(n), unprefixed; a non-finite number (NaN, ±Infinity) as text.
 */
export function csvField(value: string | number): string {
  if (typeof value === 'number') return csvQuote(csvSafeText(String(value), Number.isFinite(value)));
  return csvQuote(csvSafeText(value));
}

/** One CSV line of fields (csvField each), ending with CRLF. */
export function csvLine(values: readonly (string | number)[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) line += ',';
    line += csvField(values[i]);
  }
  return `${line}\r\n`;
}

/**
 * The SQL of csvSafeText for a text expression `t` (NULL stays NULL), for a cell PostgreSQL writes;
 * COPY's CSV format then quotes it as csvQuote does. `numeric`: an SQL boolean, true when `t` is a
 * typed number's text (as `numeric` of csvSafeText). One ascii() per cell: the common cell, which
 * begins with none of the characters, costs a comparison. `t` is read twice: pass a column or a
 * computed value of a subquery, not an expression to compute twice.
 */
export function csvSafeSql(t: string, numeric?: string): string {
  const keep = numeric ? ` AND NOT (ascii(${t}) = 45 AND (${numeric}) AND ascii(substr(${t}, 2, 1)) BETWEEN 48 AND 57)` : '';
  return `CASE WHEN ascii(${t}) IN (${TRIGGER_CODES.join(', ')})${keep} THEN '''' || ${t} ELSE ${t} END`;
}
