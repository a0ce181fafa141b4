import { UNSAFE_KEYS } from '@platform/core';
import { errors } from '@platform/errors';
import { z } from 'zod';
import type { Resource } from './resource';
import { KeySchema, type Query } from './schemas';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/**
 * `src` at the path `segs`, merged into `into`. Own properties only, and never a prototype key: a
 * stored document may hold a `__proto__` key (JSON keeps it as data), and a path through it must not
 * reach `Object.prototype`.
 */
function pick(src: unknown, segs: string[], into: unknown): unknown {
  if (segs.length === 0) return src;
  if (UNSAFE_KEYS.has(segs[0])) return into;
  if (Array.isArray(src)) {
    // MongoDB projects through arrays of sub-documents: each element keeps the path.
    const prev = Array.isArray(into) ? into : [];
    const out: unknown[] = [];
    src.forEach((el, i) => {
      if (isObj(el)) out.push(pick(el, segs, prev[i]));
    });
    return out;
  }
  if (!isObj(src) || !Object.hasOwn(src, segs[0])) return into;
  const target: Json = isObj(into) ? into : {};
  const v = pick(src[segs[0]], segs.slice(1), Object.hasOwn(target, segs[0]) ? target[segs[0]] : undefined);
  if (v !== undefined) target[segs[0]] = v;
  return target;
}

/** `only` projection over an already-formatted API object, with dotted paths, as upstream does. */
export function applyOnly<T extends object>(obj: T, only: string[] | undefined | null): Partial<T> {
  if (!only || only.length === 0) return obj;
  let out: Json = {};
  for (const key of only) {
    if (typeof key !== 'string' || !key) continue;
    out = pick(obj, key.split('.'), out) as Json;
  }
  return out as Partial<T>;
}

/**
 * The keys a list answer keeps: `minimal` gives the resource's minimal keys (upstream applies them after
 * `only`), else `only` plus the sort keys (upstream adds them), else undefined (everything).
 */
export function resolveOnly(resource: Resource, query: Query | undefined | null): string[] | undefined {
  if (query?.minimal && resource.minimalKeys) return [...resource.minimalKeys];
  if (query?.only && query.only.length > 0) {
    const keys = [...query.only];
    for (const s of query.sort ?? []) if (!keys.includes(s.key)) keys.push(s.key);
    return keys;
  }
  return undefined;
}

/** `only` of a get request: field names (dotted paths reach inside structs). */
export const OnlySchema = z.array(z.string().trim().pipe(KeySchema)).max(100);

/** `only` of a get, as upstream: the answer keeps just those fields; a name that is no field is a 400. */
export function applyGetOnly<T extends object>(info: T, only: string[] | undefined): Partial<T> {
  only?.forEach((key, i) => {
    if (!Object.hasOwn(info, key.split('.')[0])) throw errors.invalidParameter(`only[${i}]`, `${key} is not a field`);
  });
  return applyOnly(info, only);
}
