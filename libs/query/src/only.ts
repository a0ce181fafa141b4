import type { Resource } from './resource';
import type { Query } from './schemas';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

function pick(src: unknown, segs: string[], into: unknown): unknown {
  if (segs.length === 0) return src;
  if (Array.isArray(src)) {
    // MongoDB projects through arrays of sub-documents: each element keeps the path.
    const prev = Array.isArray(into) ? into : [];
    const out: unknown[] = [];
    src.forEach((el, i) => {
      if (isObj(el)) out.push(pick(el, segs, prev[i]));
    });
    return out;
  }
  if (!isObj(src) || !(segs[0] in src)) return into;
  const target: Json = isObj(into) ? into : {};
  const v = pick(src[segs[0]], segs.slice(1), target[segs[0]]);
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
