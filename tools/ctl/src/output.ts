import YAML from 'yaml';
import { csvSafeText } from '@platform/core';
import { UsageError } from './args';

export const FORMATS = ['table', 'json', 'yaml', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

export interface RenderOptions {
  format: Format;
  /** Columns to show (table, csv); default: the keys of the rows, in the order first met. */
  columns?: string[];
  /** The terminal's width: a table is fitted to it. Undefined: no fitting (not a terminal). */
  width?: number;
  noHeaders?: boolean;
}

/** The rows of an answer: a list's or a stat's `results`, or the one record. */
export function rowsOf(answer: unknown): Record<string, unknown>[] {
  if (answer && typeof answer === 'object' && Array.isArray((answer as { results?: unknown }).results)) {
    return ((answer as { results: unknown[] }).results).map((r) => (r && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : { value: r }));
  }
  return answer && typeof answer === 'object' ? [answer as Record<string, unknown>] : [];
}

const cell = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
};

/** A key of a row, dotted for nested values (`data.power_state`). */
function pick(row: Record<string, unknown>, column: string): unknown {
  if (Object.hasOwn(row, column)) return row[column];
  let v: unknown = row;
  for (const k of column.split('.')) {
    if (!v || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

function columnsOf(rows: Record<string, unknown>[], columns?: string[]): string[] {
  if (columns?.length) return columns;
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

const truncate = (s: string, w: number) => (s.length <= w ? s : w <= 1 ? s.slice(0, w) : `${s.slice(0, w - 1)}…`);
const GAP = 2;
const MIN_COLUMN = 12;

/**
 * A table: one line per row, values on one line (newlines as spaces), each column as wide as its
 * widest value. With a width (the terminal's), columns are kept from the left while each fits with at
 * least a dozen characters, the ones after are left out (named on a last line), and the widest kept
 * columns give way until the line fits (values cut with `…`).
 */
export function table(rows: Record<string, unknown>[], o: RenderOptions): string {
  let cols = columnsOf(rows, o.columns);
  if (!cols.length) return '';
  const text = rows.map((r) => cols.map((c) => cell(pick(r, c)).replace(/\s*\n\s*/g, ' ')));
  const heads = cols.map((c) => c.toUpperCase());
  let widths = cols.map((_c, i) => Math.max(o.noHeaders ? 0 : heads[i].length, ...text.map((t) => t[i].length)));
  let dropped: string[] = [];
  if (o.width) {
    const least = (i: number) => Math.min(widths[i], Math.max(o.noHeaders ? 0 : heads[i].length, MIN_COLUMN));
    let kept = 0;
    let used = 0;
    while (kept < cols.length && used + least(kept) + (kept ? GAP : 0) <= o.width) used += least(kept++) + (kept > 1 ? GAP : 0);
    kept = Math.max(kept, 1);
    dropped = cols.slice(kept);
    cols = cols.slice(0, kept);
    widths = widths.slice(0, kept);
    const floor = widths.map((_w, i) => least(i));
    const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
    while (total() > o.width) {
      const widest = widths.reduce((best, w, i) => (w - floor[i] > widths[best] - floor[best] ? i : best), 0);
      if (widths[widest] <= floor[widest]) {
        widths[widest] = Math.max(1, widths[widest] - (total() - o.width)); // one column wider than the terminal
        break;
      }
      widths[widest]--;
    }
  }
  const line = (values: string[]) =>
    cols
      .map((_c, i) => {
        const v = truncate(values[i], widths[i]);
        return i === cols.length - 1 ? v : v.padEnd(widths[i]);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  const lines = [...(o.noHeaders ? [] : [line(heads)]), ...text.map(line)];
  if (dropped.length) {
    const note = `(${dropped.length} more column${dropped.length > 1 ? 's' : ''}: ${dropped.join(', ')}; pick with -c, or -o yaml)`;
    lines.push(o.width ? truncate(note, o.width) : note);
  }
  return lines.join('\n') + '\n';
}

/**
 * One CSV field: the platform's formula guard first (a `'` before a text beginning with = + - @ tab or
 * CR; a typed number stays as it is: @platform/core's csvSafeText, docs/decisions/security.md), then
 * quoted when it holds a comma, quote or line break, or begins or ends with blanks.
 */
const csvField = (v: unknown) => {
  const s = typeof v === 'number' ? csvSafeText(String(v), Number.isFinite(v)) : csvSafeText(cell(v));
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function csv(rows: Record<string, unknown>[], o: RenderOptions): string {
  const cols = columnsOf(rows, o.columns);
  const lines = [...(o.noHeaders ? [] : [cols.map(csvField).join(',')]), ...rows.map((r) => cols.map((c) => csvField(pick(r, c))).join(','))];
  return lines.length ? lines.join('\r\n') + '\r\n' : '';
}

/** The answer in the chosen format: json and yaml show it whole; table and csv show its rows. */
export function render(answer: unknown, o: RenderOptions): string {
  switch (o.format) {
    case 'json':
      return JSON.stringify(answer ?? {}, null, 2) + '\n';
    case 'yaml':
      return YAML.stringify(answer ?? {});
    case 'csv':
      return csv(rowsOf(answer), o);
    case 'table': {
      const rows = rowsOf(answer);
      // One record: KEY / VALUE lines read better than one very wide row.
      if (!(answer && typeof answer === 'object' && 'results' in answer) && rows.length === 1 && !o.columns?.length) {
        return table(Object.entries(rows[0]).map(([key, value]) => ({ key, value })), o);
      }
      return table(rows, o);
    }
  }
}

export function parseFormat(v: string | undefined): Format {
  const f = (v ?? 'table') as Format;
  if (!FORMATS.includes(f)) throw new UsageError(`-o ${v}: formats are ${FORMATS.join(', ')}`);
  return f;
}
