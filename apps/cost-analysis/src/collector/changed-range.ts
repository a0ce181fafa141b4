import type { ChangedInfo } from '../plugin/types';

/** Changed ranges as billed_date bounds: `YYYY-MM` covers its month, dates are [start, end]. */
export function dateRange(c: ChangedInfo): { start: string; end: string | null } {
  const start = /^\d{4}-\d{2}$/.test(c.start) ? `${c.start}-01` : c.start.slice(0, 10);
  if (!c.end) return { start, end: null };
  if (/^\d{4}-\d{2}$/.test(c.end)) {
    const [y, m] = c.end.split('-').map(Number);
    return { start, end: new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10) };
  }
  const e = new Date(`${c.end.slice(0, 10)}T00:00:00Z`);
  e.setUTCDate(e.getUTCDate() + 1);
  return { start, end: e.toISOString().slice(0, 10) };
}
