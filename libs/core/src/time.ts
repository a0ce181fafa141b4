/** Timestamps leave the API as ISO 8601 UTC with milliseconds; absent ones as the empty string. */
export function isoOrEmpty(value: Date | string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '';
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}
