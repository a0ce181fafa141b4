/**
 * Guards for values that come from callers: keys that would reach `Object.prototype` when used as an
 * object key or a path segment, and JSON values too deep to be walked safely by recursive code
 * (zod, JSON.stringify, the query compiler).
 */

/** Keys that are never data: as an object key or a path segment they reach an object's prototype. */
export const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The first unsafe segment of a (dotted) key, or undefined when every segment is safe. */
export function unsafeSegment(key: string): string | undefined {
  if (UNSAFE_KEYS.has(key)) return key;
  if (!key.includes('.')) return undefined;
  for (const seg of key.split('.')) if (UNSAFE_KEYS.has(seg)) return seg;
  return undefined;
}

export const isSafeKey = (key: string): boolean => unsafeSegment(key) === undefined;

export interface JsonLimits {
  /** Nesting depth: the top-level object is depth 1. */
  maxDepth: number;
  /** Refuse object keys with an unsafe segment (`__proto__`, `a.constructor.b`, ...). */
  refuseUnsafeKeys?: boolean;
  /**
   * Refuse what PostgreSQL cannot store in text or jsonb, in keys and strings: NUL characters, and lone
   * UTF-16 surrogates (a JSON `"\ud800"` escape with no pair: no UTF-8 spelling exists for it).
   */
  refuseNul?: boolean;
}

export interface JsonProblem {
  kind: 'depth' | 'unsafe_key' | 'nul' | 'surrogate';
  /** Where it is, as the API names keys: `query.filter[0].value.a`. */
  path: string;
  reason: string;
}

interface Frame {
  value: unknown;
  depth: number;
  key: string | number | null;
  parent: Frame | null;
}

/** A UTF-16 surrogate without its pair. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorable = (s: string): 'nul' | 'surrogate' | undefined => (s.includes('\u0000') ? 'nul' : LONE_SURROGATE.test(s) ? 'surrogate' : undefined);
const REASON = { nul: 'NUL characters are not allowed', surrogate: 'a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape) is not text' } as const;

function pathOf(f: Frame | null): string {
  const parts: (string | number)[] = [];
  for (let cur = f; cur && cur.key !== null; cur = cur.parent) parts.push(cur.key);
  let out = '';
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i];
    out = typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${p}` : p;
  }
  return out || 'body';
}

/**
 * Walks a parsed JSON value without recursion (so any depth is safe to inspect) and answers the first
 * problem: a level past `maxDepth`, or (when asked) an object key with an unsafe segment.
 */
export function inspectJson(value: unknown, limits: JsonLimits): JsonProblem | undefined {
  const stack: Frame[] = [{ value, depth: 1, key: null, parent: null }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    const v = f.value;
    if (typeof v === 'string') {
      const bad = limits.refuseNul ? unstorable(v) : undefined;
      if (bad) return { kind: bad, path: pathOf(f), reason: REASON[bad] };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (f.depth > limits.maxDepth) {
      return { kind: 'depth', path: pathOf(f), reason: `nested deeper than ${limits.maxDepth} levels` };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const item = v[i];
        if ((item !== null && typeof item === 'object') || (limits.refuseNul && typeof item === 'string')) stack.push({ value: item, depth: f.depth + 1, key: i, parent: f });
      }
      continue;
    }
    for (const k of Object.keys(v)) {
      if (limits.refuseUnsafeKeys) {
        const seg = unsafeSegment(k);
        if (seg !== undefined) {
          return { kind: 'unsafe_key', path: pathOf({ value: null, depth: 0, key: k, parent: f }), reason: `"${seg}" is not allowed as a key` };
        }
      }
      const badKey = limits.refuseNul ? unstorable(k) : undefined;
      if (badKey) {
        const shown = k.replace(/\u0000/g, '\\u0000').replace(/[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
        return { kind: badKey, path: pathOf({ value: null, depth: 0, key: shown, parent: f }), reason: REASON[badKey] };
      }
      const item = (v as Record<string, unknown>)[k];
      if ((item !== null && typeof item === 'object') || (limits.refuseNul && typeof item === 'string')) stack.push({ value: item, depth: f.depth + 1, key: k, parent: f });
    }
  }
  return undefined;
}

/**
 * `obj[key] = value` as an own data property, whatever the key: assigning `__proto__` would instead
 * change the object's prototype (and drop the value). For keys that are data (labels, tags, CSV
 * columns), so nothing is lost and no prototype is touched.
 */
export function setOwn<T extends object>(obj: T, key: string, value: unknown): T {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}
