import { unsafeSegment } from '@platform/core';
import { errors } from '@platform/errors';
import { QUERY_LIMITS } from './schemas';
import type { FieldType } from './resource';
import type { Ctx } from './sql';
import { parseIso8601 } from './time';

/**
 * A condition's value checked and coerced for its field (mongoengine's coercions), before it becomes a
 * bind parameter: scalars, JSON values, patterns, `match` objects. A bad value is a 400 naming it.
 */

export function likePattern(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);


export function jsonText(v: unknown): string {
  return JSON.stringify(v instanceof Date ? v.toISOString() : v);
}

export interface Env {
  ctx: Ctx;
  errKey: string; // e.g. query.filter[0]
  now: Date;
}

export const valueErr = (env: Env, reason: string) => errors.invalidParameter(`${env.errKey}.value`, reason);

/** The bind value of one scalar for a typed (non-JSON) kind, coerced as mongoengine's fields do. */
export function scalarFor(kind: FieldType, v: unknown, env: Env): string | number | boolean {
  switch (kind) {
    case 'string':
    case 'string_array':
      if (typeof v === 'string') return v;
      throw valueErr(env, 'expected a string');
    case 'number':
    case 'integer': {
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      throw valueErr(env, 'expected a number');
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw valueErr(env, 'expected a boolean');
    case 'datetime': {
      const d = parseIso8601(v);
      if (!d) throw valueErr(env, 'expected an ISO 8601 datetime');
      return d.toISOString();
    }
    default:
      throw valueErr(env, 'unsupported value');
  }
}

export function jsonScalar(v: unknown, env: Env, allowObject = true): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (allowObject && (isPlainObject(v) || Array.isArray(v))) return v;
  throw valueErr(env, 'unsupported value');
}


export function textOf(v: unknown, env: Env): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw valueErr(env, 'expected a string');
}

/**
 * A caller's regular expression: a string of at most QUERY_LIMITS.regexLength characters that compiles.
 * PostgreSQL runs it (`~*`), bounded by the statement timeout; the in-memory evaluator runs it on a
 * linear-time engine (memory.ts). A pattern PostgreSQL refuses is a 400 from `execute`.
 */
export function checkRegex(v: unknown, env: Env): string {
  if (typeof v !== 'string') throw valueErr(env, 'expected a regular expression string');
  if (v.length > QUERY_LIMITS.regexLength) throw valueErr(env, `a regular expression has at most ${QUERY_LIMITS.regexLength} characters`);
  try {
    new RegExp(v);
  } catch {
    throw valueErr(env, 'invalid regular expression');
  }
  return v;
}

/** Expands `{ 'a.b': 1 }` to `{ a: { b: 1 } }` for a containment test; refuses query operators (`$gt`). */
export function expandMatch(obj: Record<string, unknown>, env: Env): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('$')) throw valueErr(env, `match operators like ${k} are not supported`);
    const unsafe = unsafeSegment(k);
    if (unsafe !== undefined) throw valueErr(env, `"${unsafe}" is not allowed in a key`);
    const segs = k.split('.');
    if (segs.some((s) => !s)) throw valueErr(env, `bad key "${k}"`);
    let cur = out;
    for (const s of segs.slice(0, -1)) {
      if (!Object.hasOwn(cur, s) || !isPlainObject(cur[s])) cur[s] = {};
      cur = cur[s] as Record<string, unknown>;
    }
    const last = segs[segs.length - 1];
    cur[last] = isPlainObject(v) ? expandMatch(v, env) : jsonScalar(v, env);
  }
  return out;
}
