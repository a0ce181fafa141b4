import { unsafeSegment } from '@platform/core';
import { errors } from '@platform/errors';
import { splitKey, type FieldType } from './resource';
import type { Ctx } from './sql';
import type { DatePrecision } from './time';

/**
 * Keys as SQL: the columns visible at a point of a statement (a Scope) and how a key resolves to a value
 * expression (a Ref), with JSON sub-keys as bind parameters. Shared by filters, sorts and stat stages.
 */

/** A column (or derived column) visible at some point of a statement, by API key / stage name. */
export interface Col {
  sql: string;
  kind: FieldType;
  notNull?: boolean;
  dateFormat?: DatePrecision;
}

/** A resolved key: an SQL value expression of a kind. `each` marks a path through a JSON array column. */
export interface Ref {
  sql: string;
  kind: FieldType;
  notNull?: boolean;
  dateFormat?: DatePrecision;
  each?: { arr: string; path: string };
}

export class Scope {
  constructor(readonly cols: ReadonlyMap<string, Col>) {}

  resolve(key: unknown, errKey: string, ctx: Ctx): Ref {
    if (typeof key !== 'string') throw errors.invalidParameter(errKey, 'key must be a string');
    const unsafe = unsafeSegment(key);
    if (unsafe !== undefined) throw errors.invalidParameter(errKey, `"${unsafe}" is not allowed in a key`);
    const s = splitKey(this.cols, key);
    if (!s) throw errors.invalidParameter(errKey, `unknown key "${key}"`);
    const col = s.field;
    if (s.path.length === 0) return { sql: col.sql, kind: col.kind, notNull: col.notNull, dateFormat: col.dateFormat };
    if (col.kind === 'json') {
      return { sql: `(${col.sql} #> ${ctx.add(s.path, 'text[]')})`, kind: 'json' };
    }
    if (col.kind === 'json_array') {
      const path = ctx.add(s.path, 'text[]');
      const a = ctx.uid('e');
      return {
        sql: `(SELECT jsonb_agg(${a}.v #> ${path}) FROM jsonb_array_elements(${arrayOrNull(col.sql)}) AS ${a}(v))`,
        kind: 'json',
        each: { arr: col.sql, path },
      };
    }
    throw errors.invalidParameter(errKey, `"${s.name}" has no sub-keys (key "${key}")`);
  }
}

/** Path segments `#>` would read as an array index (`0`, `-1`, ` +2`): containment cannot express those. */
const INDEX_LIKE = /^\s*[+-]?[0-9]+$/;

/**
 * `key` as a dotted path below a plain `json` column (`tags.env` → tags, ['env']), when containment
 * (`col @> {...}`) can stand for `col #> path`: no segment may be read as an array index.
 */
export function containmentPath(scope: Scope, key: unknown): { col: string; path: string[] } | null {
  if (typeof key !== 'string' || unsafeSegment(key) !== undefined) return null;
  const s = splitKey(scope.cols, key);
  if (!s || s.field.kind !== 'json' || s.path.length === 0 || s.path.some((p) => INDEX_LIKE.test(p))) return null;
  return { col: s.field.sql, path: s.path };
}

/**
 * `eq` of a scalar at a JSON path, as two containments a GIN index on the column serves:
 * `col @> {"a":{"b":v}} OR col @> {"a":{"b":[v]}}` is true exactly when `(col #> '{a,b}') = v OR
 * (col #> '{a,b}') @> [v]` is (the value, or an array holding it, at the path; both compare scalars
 * the same way, numbers numerically). Where the path is missing it is FALSE rather than NULL, which no
 * caller can tell apart: conditions are only ANDed, ORed, or negated through COALESCE.
 */
export function containsAt(p: { col: string; path: string[] }, v: string | number | boolean, ctx: Ctx): string {
  const at = (leaf: unknown) => JSON.stringify(p.path.reduceRight<unknown>((inner, seg) => ({ [seg]: inner }), leaf));
  return `(${p.col} @> ${ctx.add(at(v), 'jsonb')} OR ${p.col} @> ${ctx.add(at([v]), 'jsonb')})`;
}

export const arrayOrNull = (x: string) => `CASE WHEN jsonb_typeof(${x}) = 'array' THEN ${x} END`;
