/**
 * Cell values of an export, as upstream's export writes them (cloud_service_manager `_convert_data`):
 * whole floats as integers, lists one value per line, blank values replaced by the field's default,
 * `size` values humanised from their source unit, prefix and postfix added; timestamps shown in the
 * requested time zone (formatted by PostgreSQL, see the export's SQL).
 */

/** An IANA time zone name (`UTC`, `Asia/Seoul`); fixed offsets and unknown names are refused. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];

/** `1536` (BYTES) → `1.5 KB`; `2` with source unit GB → `2 GB`. */
export function humanSize(value: unknown, sourceUnit?: string): unknown {
  const n = value === null || value === undefined ? 0 : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return value;
  const factor = sourceUnit && SIZE_UNITS.includes(sourceUnit) ? 1024 ** SIZE_UNITS.indexOf(sourceUnit) : 1;
  const bytes = n * factor;
  if (bytes <= 0) return '0 B';
  const i = Math.min(SIZE_UNITS.length - 1, Math.max(0, Math.floor(Math.log(bytes) / Math.log(1024))));
  const s = Math.round((bytes / 1024 ** i) * 100) / 100;
  return `${s} ${SIZE_UNITS[i]}`;
}

export interface CellOptions {
  type?: string;
  prefix?: string;
  postfix?: string;
  default?: unknown;
  source_unit?: string;
}

/** One value as the text of a cell. */
export function cellText(value: unknown, o: CellOptions | undefined): string {
  if (Array.isArray(value)) {
    return value
      .map((v) => cellText(v, o))
      .filter((s) => s.trim() !== '')
      .join('\n');
  }
  let v: unknown = value;
  if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) v = o?.default ?? '';
  if (o?.type === 'size') v = humanSize(v, o.source_unit);
  let text = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (o?.prefix) text = `${o.prefix}${text}`;
  if (o?.postfix) text = `${text}${o.postfix}`;
  return text;
}

/** A cell of a row as the writers take it: a text, or a typed number (see csvCell). */
export type Cell = string | number;

/**
 * One value as a cell for the writers: a typed number shown as it is (no prefix, postfix or size
 * formatting) stays a number, which a CSV writes without the formula guard's quote (`-5`, not `'-5`:
 * @platform/core's csvField; docs/decisions/security.md, "CSV injection"); anything else is its text
 * (cellText). The Excel writer writes both as the text cellText gives.
 */
export function csvCell(value: unknown, o: CellOptions | undefined): Cell {
  if (typeof value === 'number' && !o?.prefix && !o?.postfix && o?.type !== 'size') return value;
  return cellText(value, o);
}

/** upstream's sheet names: no spaces or / \ ? * [ ] :, at most 30 characters, repeats numbered. */
export function sheetNamer(): (name: string) => string {
  const seen = new Map<string, number>();
  return (name) => {
    let base = name.replace(/[\s/\\?*[\]:]/g, '').slice(0, 30) || 'Sheet';
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    if (n > 1) base = `${base.slice(0, 29)}${n}`;
    return base;
  };
}
