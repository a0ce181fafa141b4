/** ISO 8601 and upstream's `timediff` values (python-core utils.parse_timediff_query), always UTC. */

const ISO_RE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** Parses an ISO 8601 date or date-time; a value without a zone is UTC (as upstream stores naive UTC). */
export function parseIso8601(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value !== 'string') return null;
  const m = ISO_RE.exec(value.trim());
  if (!m) return null;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (zh > 23 || zm > 59) return null;
    t -= sign * (zh * 60 + zm) * 60_000;
  }
  const dt = new Date(t);
  return Number.isNaN(dt.getTime()) ? null : dt;
}

const TIMEDIFF_RE = /^\s?(now(?:\/[dwm])?)\s?([+-])\s?(\d+)([smhdw])\s?$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

function baseTime(base: string, now: Date): Date {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (base) {
    case 'now':
      return new Date(now.getTime());
    case 'now/d':
      return new Date(day);
    case 'now/w': {
      const weekday = (now.getUTCDay() + 6) % 7; // Monday = 0, as Python's weekday()
      return new Date(day - weekday * 86_400_000);
    }
    default: // now/m
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  }
}

/** `now`, `now/d`, `now/w`, `now/m`, optionally `± N s|m|h|d|w`. Null when the value is not of that form. */
export function parseTimediff(value: unknown, now: Date = new Date()): Date | null {
  if (typeof value !== 'string') return null;
  const m = TIMEDIFF_RE.exec(value);
  if (m) {
    const base = baseTime(m[1], now);
    const delta = Number(m[3]) * UNIT_MS[m[4]];
    return new Date(m[2] === '+' ? base.getTime() + delta : base.getTime() - delta);
  }
  const t = value.trim();
  if (t === 'now' || t === 'now/d' || t === 'now/w' || t === 'now/m') return baseTime(t, now);
  return null;
}

export type DatePrecision = 'YYYY' | 'YYYY-MM' | 'YYYY-MM-DD';

/**
 * An analyze `start`/`end` (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`) as a UTC date: `start` is the first day of
 * the period, `end` the first day after it (end is inclusive at its own precision).
 */
export function parsePeriodBound(value: string, which: 'start' | 'end'): Date | null {
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(value);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = m[2] ? Number(m[2]) : undefined;
  const d = m[3] ? Number(m[3]) : undefined;
  if (mo !== undefined && (mo < 1 || mo > 12)) return null;
  if (d !== undefined) {
    const c = new Date(Date.UTC(y, (mo as number) - 1, d));
    if (c.getUTCMonth() !== (mo as number) - 1 || c.getUTCDate() !== d) return null;
  }
  if (which === 'start') return new Date(Date.UTC(y, (mo ?? 1) - 1, d ?? 1));
  if (d !== undefined) return new Date(Date.UTC(y, (mo as number) - 1, d + 1));
  if (mo !== undefined) return new Date(Date.UTC(y, mo, 1));
  return new Date(Date.UTC(y + 1, 0, 1));
}

export function formatDate(date: Date, precision: DatePrecision): string {
  const iso = date.toISOString();
  return iso.slice(0, precision.length);
}
