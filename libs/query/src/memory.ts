/**
 * A plain in-memory evaluator of the query DSL's semantics (MongoDB's, as the library implements them).
 * It serves small lists that live in configuration rather than a table (`listInMemory`), and the
 * property test checks the SQL compiler against it. Rows are keyed by API key; datetime values are Dates.
 */
import { RE2JS } from 're2js';
import { errors } from '@platform/errors';
import type { FieldType, Resource } from './resource';
import { splitKey } from './resource';
import type { Condition, Query, SortItem } from './schemas';
import { compileList } from './list';
import { parseIso8601, parseTimediff } from './time';

export type Doc = Record<string, unknown>;
type Val = unknown;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

interface Access {
  kind: FieldType;
  value: Val; // undefined = missing/NULL
  each?: Val[]; // json_array col + path: the path's value in each element
  eachMissingArr?: boolean;
}

function walk(v: Val, path: string[]): Val {
  let cur = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

export function access(resource: Resource, doc: Doc, key: string): Access {
  const s = splitKey(resource.fields, key);
  if (!s) throw new Error(`unknown key ${key}`);
  const raw = doc[s.name];
  const v = raw === null ? undefined : raw;
  if (s.path.length === 0) return { kind: s.field.type, value: v };
  if (s.field.type === 'json_array') {
    if (!Array.isArray(v)) return { kind: 'json', value: undefined, each: [], eachMissingArr: true };
    return { kind: 'json', value: v.map((e) => walk(e, s.path) ?? null), each: v.map((e) => walk(e, s.path)) };
  }
  return { kind: 'json', value: walk(v, s.path) };
}

// ---------------------------------------------------------------------- jsonb-like comparison

function typeRank(v: Val): number {
  if (Array.isArray(v) && v.length === 0) return -1; // jsonb sorts an empty array first
  if (v === null) return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'boolean') return 3;
  if (Array.isArray(v)) return 4;
  return 5;
}

export function cmpJson(a: Val, b: Val): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'string') return a < (b as string) ? -1 : a > (b as string) ? 1 : 0;
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a)) {
    const bb = b as Val[];
    if (a.length !== bb.length) return a.length - bb.length;
    for (let i = 0; i < a.length; i++) {
      const c = cmpJson(a[i], bb[i]);
      if (c) return c;
    }
    return 0;
  }
  return 0;
}

export function cmpScalar(a: Val, b: Val): number {
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = cmpScalar(a[i], b[i]);
      if (c) return c;
    }
    return a.length - b.length;
  }
  return cmpJson(a, b);
}

const deepEq = (a: Val, b: Val): boolean => JSON.stringify(a) === JSON.stringify(b);
const jsonEq = (a: Val, b: Val): boolean =>
  typeof a === 'number' && typeof b === 'number' ? a === b : deepEq(a, b);

// ---------------------------------------------------------------------- conditions

function coerce(kind: FieldType, v: Val): Val {
  if (kind === 'datetime' && typeof v === 'string') return parseIso8601(v);
  if ((kind === 'number' || kind === 'integer') && typeof v === 'string') return Number(v);
  return v;
}

function elems(a: Access): Val[] {
  if (a.value === undefined) return [];
  if (a.kind === 'string_array') return a.value as Val[];
  if ((a.kind === 'json' || a.kind === 'json_array') && Array.isArray(a.value)) return a.value;
  return [a.value];
}

function posEq(a: Access, v: Val): boolean {
  if (a.each) {
    if (v === null) return Boolean(a.eachMissingArr) || a.each.some((x) => posEq({ kind: 'json', value: x }, null));
    return a.each.some((x) => posEq({ kind: 'json', value: x }, v));
  }
  if (v === null) {
    if (a.value === undefined) return true;
    if (a.kind === 'json' || a.kind === 'json_array') return a.value === null || (Array.isArray(a.value) && a.value.includes(null));
    return false;
  }
  if (a.value === undefined) return false;
  const cv = coerce(a.kind, v);
  if (a.kind === 'json' || a.kind === 'json_array') {
    if (jsonEq(a.value, cv)) return true;
    return Array.isArray(a.value) && a.value.some((e) => jsonEq(e, cv));
  }
  if (a.kind === 'integer' && typeof cv === 'number' && !Number.isInteger(cv)) return false;
  return elems(a).some((e) => cmpScalar(e, cv) === 0 && typeof e === typeof cv);
}

function posCmp(a: Access, op: string, v: Val): boolean {
  if (a.each) return a.each.some((x) => posCmp({ kind: 'json', value: x }, op, v));
  const cv = coerce(a.kind, v);
  const test = (e: Val) => {
    if (e === null || e === undefined) return false;
    if (a.kind === 'json' || a.kind === 'json_array') {
      if (typeRank(e) !== typeRank(cv)) return false;
    }
    const c = cmpScalar(e, cv);
    return op === 'lt' ? c < 0 : op === 'lte' ? c <= 0 : op === 'gt' ? c > 0 : c >= 0;
  };
  return elems(a).some(test);
}

function posStr(a: Access, pred: (s: string) => boolean): boolean {
  if (a.each) return a.each.some((x) => posStr({ kind: 'json', value: x }, pred));
  return elems(a).some((e) => typeof e === 'string' && pred(e));
}

function posExists(a: Access): boolean {
  if (a.each) return a.each.some((x) => x !== undefined);
  return a.value !== undefined;
}

export function matchCondition(resource: Resource, doc: Doc, c: Condition, now: Date): boolean {
  const a = access(resource, doc, c.key);
  let op = c.operator;
  let v = c.value;
  const m = /^(datetime|timediff)_(.*)$/.exec(op);
  if (m) {
    v = m[1] === 'datetime' ? parseIso8601(v) : parseTimediff(v, now);
    op = m[2];
  }
  const contains = (s: string) => (e: string) => e.toLowerCase().includes(s.toLowerCase());
  const regex = (s: string) => {
    const r = linearRegex(s);
    return (e: string) => r.test(e);
  };
  switch (op) {
    case 'eq':
      return posEq(a, v);
    case 'not':
      return !posEq(a, v);
    case 'in':
      return (v as Val[]).some((x) => posEq(a, x));
    case 'not_in':
      return !(v as Val[]).some((x) => posEq(a, x));
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return posCmp(a, op, v);
    case 'exists':
      return v ? posExists(a) : !posExists(a);
    case 'contain':
      return posStr(a, contains(String(v)));
    case 'not_contain':
      return !posStr(a, contains(String(v)));
    case 'contain_in':
      return (v as string[]).some((x) => posStr(a, contains(x)));
    case 'not_contain_in':
      return (v as string[]).some((x) => !posStr(a, contains(x)));
    case 'regex':
      return posStr(a, regex(String(v)));
    case 'regex_in':
      return (v as string[]).some((x) => posStr(a, regex(x)));
    default:
      throw new Error(`evaluator: operator ${op}`);
  }
}

/**
 * A caller's regex on a linear-time engine (RE2 semantics, pure JavaScript): no input, however hostile,
 * makes it backtrack, so it cannot hold the event loop. Compiled once per pattern.
 */
const compiled = new Map<string, RE2JS>();
function linearRegex(pattern: string): RE2JS {
  let r = compiled.get(pattern);
  if (!r) {
    r = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(pattern, r);
  }
  return r;
}

/** Every regex of a query compiles on the linear-time engine, or the query is a 400 naming it. */
function checkLinearRegexes(conds: readonly Condition[] | null | undefined, prefix: string): void {
  (conds ?? []).forEach((c, i) => {
    if (c.operator !== 'regex' && c.operator !== 'regex_in') return;
    for (const p of Array.isArray(c.value) ? c.value : [c.value]) {
      try {
        linearRegex(String(p));
      } catch (e) {
        throw errors.invalidParameter(`${prefix}[${i}].value`, `unsupported regular expression (${(e as Error).message}; lookaround and backreferences are not supported)`);
      }
    }
  });
}

export interface EvalQuery {
  filter?: Condition[];
  filter_or?: Condition[];
  keyword?: string;
  sort?: SortItem[];
  page?: { start?: number; limit?: number };
}

export function evalFilter(resource: Resource, docs: Doc[], q: EvalQuery, scope: Condition[], now: Date): Doc[] {
  const ors = [...(q.filter_or ?? [])];
  const tokens = (q.keyword ?? '').trim().split(' ').filter(Boolean);
  if (tokens.length) for (const k of resource.keywordKeys) ors.push({ key: k, value: tokens, operator: 'contain_in' });
  return docs.filter(
    (d) =>
      [...scope, ...(q.filter ?? [])].every((c) => matchCondition(resource, d, c, now)) &&
      (ors.length === 0 || ors.some((c) => matchCondition(resource, d, c, now))),
  );
}

function bsonRank(v: Val): number {
  if (v === undefined || v === null) return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  if (Array.isArray(v)) return 5;
  if (typeof v === 'boolean') return 6;
  return 4;
}

function cmpJsonSort(a: Val, b: Val): number {
  const r = bsonRank(a) - bsonRank(b);
  if (r !== 0) return r;
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  return cmpJson(a, b);
}

function sortValue(resource: Resource, d: Doc, key: string): Val {
  const a = access(resource, d, key);
  return a.value;
}

export function evalSort(resource: Resource, docs: Doc[], sort: SortItem[]): Doc[] {
  const items = [...sort];
  if (!items.some((s) => s.key === resource.idKey)) items.push({ key: resource.idKey, desc: false });
  return [...docs].sort((x, y) => {
    for (const s of items) {
      const a = sortValue(resource, x, s.key);
      const b = sortValue(resource, y, s.key);
      let c: number;
      if (splitKey(resource.fields, s.key)?.path.length) c = cmpJsonSort(a, b);
      else if (a === undefined && b === undefined) c = 0;
      else if (a === undefined) c = -1; // nulls first ascending
      else if (b === undefined) c = 1;
      else c = cmpScalar(a, b);
      if (c !== 0) return s.desc ? -c : c;
    }
    return 0;
  });
}

export function evalList(resource: Resource, docs: Doc[], q: EvalQuery, scope: Condition[], now: Date) {
  const matched = evalSort(resource, evalFilter(resource, docs, q, scope, now), q.sort ?? []);
  const limit = q.page?.limit && q.page.limit > 0 ? Math.min(q.page.limit, resource.maxLimit || Infinity) : resource.maxLimit || Infinity;
  const start = Math.max(1, q.page?.start ?? 1);
  return { rows: matched.slice(start - 1, start - 1 + limit), total_count: matched.length };
}

/**
 * list over rows held in memory (e.g. configuration), with the same validation and answers as
 * runList: the query is compiled first, so a bad key or operator is the same 400.
 */
export function listInMemory<T extends object>(resource: Resource, rows: T[], query: Query | undefined, scope: Condition[] = [], now = new Date()) {
  compileList(resource, query, scope, { now });
  checkLinearRegexes(query?.filter, 'query.filter');
  checkLinearRegexes(query?.filter_or, 'query.filter_or');
  const q: EvalQuery = {
    filter: query?.filter ?? undefined,
    filter_or: query?.filter_or ?? undefined,
    keyword: query?.keyword ?? undefined,
    sort: query?.sort?.map((s) => ({ key: s.key, desc: Boolean(s.desc) })),
    page: query?.page ? { start: query.page.start ?? undefined, limit: query.page.limit ?? undefined } : undefined,
  };
  const docs = rows as unknown as Doc[];
  if (query?.count_only) return { rows: [] as T[], total_count: evalFilter(resource, docs, q, scope, now).length };
  const r = evalList(resource, docs, q, scope, now);
  return { rows: r.rows as unknown as T[], total_count: r.total_count };
}
