import { createHash } from 'node:crypto';
import type { Struct } from '../registry';
import { ParseError } from './types';

/** Helpers the webhook plugins share for reading loosely typed payloads. */
export const isObject = (v: unknown): v is Struct => v !== null && typeof v === 'object' && !Array.isArray(v);
export const obj = (v: unknown): Struct => (isObject(v) ? v : {});
export const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : v === undefined || v === null ? fallback : String(v));
export const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** An ISO 8601 time (also `+0000` offsets, as CloudWatch writes them) or a ParseError. */
export function isoTime(v: unknown, field: string): string {
  const s = str(v).replace(/([+-]\d\d)(\d\d)$/, '$1:$2');
  const d = new Date(s);
  if (!s || Number.isNaN(d.getTime())) throw new ParseError(`${field} is not an ISO 8601 time: ${str(v)}`);
  return d.toISOString();
}

/** The value at a dotted path (`a.b.c`), or undefined: own properties only, never a prototype's. */
export function at(data: unknown, path: string): unknown {
  let v: unknown = data;
  for (const k of path.split('.')) {
    if (!isObject(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}
