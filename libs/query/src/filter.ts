import { unsafeSegment } from '@platform/core';
import { errors } from '@platform/errors';
import { QUERY_LIMITS, type Condition } from './schemas';
import { splitKey, type FieldType } from './resource';
import { Ctx } from './sql';
import { parseIso8601, parseTimediff, type DatePrecision } from './time';

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
function containmentPath(scope: Scope, key: unknown): { col: string; path: string[] } | null {
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
function containsAt(p: { col: string; path: string[] }, v: string | number | boolean, ctx: Ctx): string {
  const at = (leaf: unknown) => JSON.stringify(p.path.reduceRight<unknown>((inner, seg) => ({ [seg]: inner }), leaf));
  return `(${p.col} @> ${ctx.add(at(v), 'jsonb')} OR ${p.col} @> ${ctx.add(at([v]), 'jsonb')})`;
}

export const arrayOrNull = (x: string) => `CASE WHEN jsonb_typeof(${x}) = 'array' THEN ${x} END`;

// ------------------------------------------------------------------------------------------------ operators

type Positive =
  | 'eq'
  | 'in'
  | 'lt'
  | 'lte'
  | 'gt'
  | 'gte'
  | 'exists'
  | 'contain'
  | 'contain_in'
  | 'regex'
  | 'regex_in'
  | 'match';

interface OpInfo {
  multiple: boolean;
}

/** Every operator of upstream's FILTER_OPERATORS (timedelta_* are older aliases of timediff_*). */
export const FILTER_OPERATORS: Readonly<Record<string, OpInfo>> = {
  eq: { multiple: false },
  not: { multiple: false },
  lt: { multiple: false },
  lte: { multiple: false },
  gt: { multiple: false },
  gte: { multiple: false },
  exists: { multiple: false },
  contain: { multiple: false },
  not_contain: { multiple: false },
  in: { multiple: true },
  not_in: { multiple: true },
  contain_in: { multiple: true },
  not_contain_in: { multiple: true },
  match: { multiple: false },
  regex: { multiple: false },
  regex_in: { multiple: true },
  datetime_gt: { multiple: false },
  datetime_gte: { multiple: false },
  datetime_lt: { multiple: false },
  datetime_lte: { multiple: false },
  timediff_gt: { multiple: false },
  timediff_gte: { multiple: false },
  timediff_lt: { multiple: false },
  timediff_lte: { multiple: false },
  timedelta_gt: { multiple: false },
  timedelta_gte: { multiple: false },
  timedelta_lt: { multiple: false },
  timedelta_lte: { multiple: false },
};

const CMP: Record<string, string> = { lt: '<', lte: '<=', gt: '>', gte: '>=' };

function likePattern(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

export function jsonText(v: unknown): string {
  return JSON.stringify(v instanceof Date ? v.toISOString() : v);
}

export interface Env {
  ctx: Ctx;
  errKey: string; // e.g. query.filter[0]
  now: Date;
}

const valueErr = (env: Env, reason: string) => errors.invalidParameter(`${env.errKey}.value`, reason);

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

/** `pred` applied to x, or to any element when x is a JSON array (MongoDB's implicit array matching). */
function anyJson(x: string, pred: (v: string) => string, ctx: Ctx): string {
  const a = ctx.uid('e');
  return `(CASE WHEN jsonb_typeof(${x}) = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(${x}) AS ${a}(v) WHERE ${pred(`${a}.v`)}) ELSE ${pred(x)} END)`;
}

function anyText(x: string, pred: (v: string) => string, ctx: Ctx): string {
  const a = ctx.uid('e');
  return `EXISTS (SELECT 1 FROM unnest(${x}) AS ${a}(v) WHERE ${pred(`${a}.v`)})`;
}

function textOf(v: unknown, env: Env): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw valueErr(env, 'expected a string');
}

/**
 * A caller's regular expression: a string of at most QUERY_LIMITS.regexLength characters that compiles.
 * PostgreSQL runs it (`~*`), bounded by the statement timeout; the in-memory evaluator runs it on a
 * linear-time engine (memory.ts). A pattern PostgreSQL refuses is a 400 from `execute`.
 */
function checkRegex(v: unknown, env: Env): string {
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
function expandMatch(obj: Record<string, unknown>, env: Env): Record<string, unknown> {
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

/** SQL of a positive operator on a value expression x of `kind` (never an `each` ref). */
function positive(kind: FieldType, x: string, op: Positive, v: unknown, env: Env): string {
  const { ctx } = env;
  switch (op) {
    case 'exists':
      return v ? `(${x} IS NOT NULL)` : `(${x} IS NULL)`;
    case 'eq':
      if (v === null) {
        if (kind === 'json' || kind === 'json_array') {
          return `(${x} IS NULL OR ${x} = 'null'::jsonb OR ${x} @> '[null]'::jsonb)`;
        }
        return `(${x} IS NULL)`;
      }
      return positiveIn(kind, x, [v], env);
    case 'in':
      return positiveIn(kind, x, v as unknown[], env);
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return compare(kind, x, op, v, env);
    case 'contain':
    case 'contain_in': {
      const list = op === 'contain' ? [v] : (v as unknown[]);
      const parts = list.map((item) => {
        const pat = ctx.add(likePattern(textOf(item, env)), 'text');
        return stringPred(kind, x, (e) => `${e} ILIKE ${pat}`, env);
      });
      return or(parts);
    }
    case 'regex':
    case 'regex_in': {
      const list = op === 'regex' ? [v] : (v as unknown[]);
      const parts = list.map((item) => {
        const pat = ctx.add(checkRegex(item, env), 'text');
        return stringPred(kind, x, (e) => `${e} ~* ${pat}`, env);
      });
      return or(parts);
    }
    case 'match': {
      if (!isPlainObject(v)) throw valueErr(env, 'match needs an object value');
      if (kind !== 'json' && kind !== 'json_array') {
        throw errors.invalidParameter(`${env.errKey}.operator`, 'match needs a field holding objects');
      }
      return `(${x} @> ${ctx.add(JSON.stringify([expandMatch(v, env)]), 'jsonb')})`;
    }
  }
}

export function or(parts: string[]): string {
  if (parts.length === 0) return 'FALSE';
  return parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`;
}

function stringPred(kind: FieldType, x: string, pred: (e: string) => string, env: Env): string {
  switch (kind) {
    case 'string':
      return `(${pred(x)})`;
    case 'string_array':
      return anyText(x, pred, env.ctx);
    case 'json':
    case 'json_array':
      return anyJson(x, (e) => `(jsonb_typeof(${e}) = 'string' AND ${pred(`(${e} #>> '{}')`)})`, env.ctx);
    default:
      throw errors.invalidParameter(`${env.errKey}.operator`, `operator needs a string field (field is ${kind})`);
  }
}

function positiveIn(kind: FieldType, x: string, list: unknown[], env: Env): string {
  const { ctx } = env;
  const hasNull = list.some((i) => i === null);
  const items = list.filter((i) => i !== null);
  const parts: string[] = [];
  if (hasNull) parts.push(positive(kind, x, 'eq', null, env));
  if (items.length > 0) {
    switch (kind) {
      case 'string':
      case 'number':
      case 'boolean':
      case 'datetime':
        if (items.length === 1) parts.push(`(${x} = ${ctx.add(scalarFor(kind, items[0], env))})`);
        else parts.push(`(${x} = ANY(${ctx.add(items.map((i) => scalarFor(kind, i, env)))}))`);
        break;
      case 'integer': {
        const ints = items.map((i) => scalarFor(kind, i, env) as number).filter((n) => Number.isInteger(n));
        if (ints.length === 1) parts.push(`(${x} = ${ctx.add(ints[0])})`);
        else if (ints.length > 1) parts.push(`(${x} = ANY(${ctx.add(ints)}))`);
        break;
      }
      case 'string_array': {
        const vals = items.map((i) => scalarFor(kind, i, env));
        parts.push(vals.length === 1 ? `(${x} @> ${ctx.add(vals, 'text[]')})` : `(${x} && ${ctx.add(vals, 'text[]')})`);
        break;
      }
      case 'json':
      case 'json_array': {
        const vals = items.map((i) => jsonScalar(i, env));
        if (vals.length === 1) {
          parts.push(
            `(${x} = ${ctx.add(jsonText(vals[0]), 'jsonb')} OR ${x} @> ${ctx.add(JSON.stringify([vals[0]]), 'jsonb')})`,
          );
        } else {
          parts.push(
            `(${x} = ANY(${ctx.add(vals.map(jsonText), 'jsonb[]')}) OR ${x} @> ANY(${ctx.add(
              vals.map((i) => JSON.stringify([i])),
              'jsonb[]',
            )}))`,
          );
        }
        break;
      }
    }
  }
  return or(parts);
}

function compare(kind: FieldType, x: string, op: 'lt' | 'lte' | 'gt' | 'gte', v: unknown, env: Env): string {
  const { ctx } = env;
  if (v === null || v === undefined) throw valueErr(env, `${op} needs a value`);
  const sym = CMP[op];
  switch (kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'datetime':
      return `(${x} ${sym} ${ctx.add(scalarFor(kind, v, env))})`;
    case 'integer': {
      // Keep the comparison integer-typed (so an index applies): x < 1.5 <=> x < 2, x <= 1.5 <=> x <= 1.
      let n = scalarFor(kind, v, env) as number;
      if (!Number.isInteger(n)) n = op === 'lt' || op === 'gte' ? Math.ceil(n) : Math.floor(n);
      return `(${x} ${sym} ${ctx.add(n)})`;
    }
    case 'string_array': {
      const pv = ctx.add(scalarFor(kind, v, env), 'text');
      return anyText(x, (e) => `${e} ${sym} ${pv}`, ctx);
    }
    case 'json':
    case 'json_array': {
      const j = jsonScalar(v, env, false);
      const t = typeof j === 'number' ? 'number' : typeof j === 'string' ? 'string' : 'boolean';
      const pv = ctx.add(jsonText(j), 'jsonb');
      return anyJson(x, (e) => `(jsonb_typeof(${e}) = '${t}' AND ${e} ${sym} ${pv})`, ctx);
    }
  }
}

/** SQL of one filter condition. `errKey` names it in errors (`query.filter[0]`). */
export function compileCondition(cond: Condition, scope: Scope, env: Env): string {
  const { key, operator } = cond;
  const value = cond.value === undefined ? null : cond.value;
  const info = typeof operator === 'string' && Object.hasOwn(FILTER_OPERATORS, operator) ? FILTER_OPERATORS[operator] : undefined;
  if (!info) throw errors.invalidParameter(`${env.errKey}.operator`, `unsupported operator "${String(operator)}"`);
  if (info.multiple && !Array.isArray(value)) throw valueErr(env, `${operator} needs a list value`);
  if (!info.multiple && Array.isArray(value)) throw valueErr(env, `${operator} needs a single value, not a list`);
  if (operator === 'exists' && typeof value !== 'boolean') throw valueErr(env, 'exists needs a boolean value');
  if ((operator === 'contain_in' || operator === 'not_contain_in' || operator === 'regex_in') && (value as unknown[]).length === 0) {
    throw valueErr(env, `${operator} needs a non-empty list`);
  }
  // An empty in / not_in matches nothing / everything: the key is still checked, on a scratch context
  // (a JSON path bound and then not used would leave PostgreSQL a parameter of no known type).
  if ((operator === 'in' || operator === 'not_in') && (value as unknown[]).length === 0) {
    scope.resolve(key, `${env.errKey}.key`, new Ctx());
    return operator === 'in' ? 'FALSE' : 'TRUE';
  }
  if (operator === 'eq' && (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
    const p = containmentPath(scope, key);
    if (p) return containsAt(p, value, env.ctx);
  }
  const ref = scope.resolve(key, `${env.errKey}.key`, env.ctx);

  let op: string = operator;
  let v: unknown = value;
  if (/^(datetime|timediff|timedelta)_/.test(op)) {
    if (ref.kind !== 'datetime') {
      throw errors.invalidParameter(`${env.errKey}.operator`, `${op} needs a datetime field`);
    }
    const [family, cmp] = op.split('_') as [string, 'lt' | 'lte' | 'gt' | 'gte'];
    const d = family === 'datetime' ? parseIso8601(v) : parseTimediff(v, env.now);
    if (!d) {
      throw valueErr(env, family === 'datetime' ? 'expected an ISO 8601 datetime' : 'expected a value like "now/d - 7d"');
    }
    op = cmp;
    v = d.toISOString();
  }

  const pos = (p: Positive, val: unknown): string => {
    if (ref.each) {
      const a = env.ctx.uid('e');
      const inner = positive('json', `(${a}.v #> ${ref.each.path})`, p, val, env);
      const exists = `EXISTS (SELECT 1 FROM jsonb_array_elements(${arrayOrNull(ref.each.arr)}) AS ${a}(v) WHERE ${inner})`;
      if (p === 'eq' && val === null) return `(${ref.each.arr} IS NULL OR ${exists})`;
      return exists;
    }
    return positive(ref.kind, ref.sql, p, val, env);
  };
  const isScalar = !ref.each && ['string', 'number', 'integer', 'boolean', 'datetime'].includes(ref.kind);
  const not = (sql: string) => `(NOT COALESCE(${sql}, FALSE))`;

  switch (op) {
    case 'not':
      if (v === null) return isScalar ? `(${ref.sql} IS NOT NULL)` : not(pos('eq', null));
      if (isScalar && ref.kind !== 'integer') return `(${ref.sql} IS DISTINCT FROM ${env.ctx.add(scalarFor(ref.kind, v, env))})`;
      return not(pos('eq', v));
    case 'exists':
      return v ? pos('exists', true) : not(pos('exists', true));
    case 'not_in':
      return not(pos('in', v));
    case 'not_contain':
      return not(pos('contain', v));
    case 'not_contain_in':
      // upstream ORs `not icontains` over the values: true when at least one value is not contained.
      return or((v as unknown[]).map((item) => not(pos('contain', item))));
    default:
      return pos(op as Positive, v);
  }
}

export interface FilterInput {
  filter?: Condition[] | null;
  filter_or?: Condition[] | null;
  keyword?: string | null;
}

/**
 * The WHERE of a query: `scope` AND (filter, ANDed) AND (filter_or + keyword conditions, ORed).
 * Keyword tokens become `contain_in` conditions over the keyword keys appended to filter_or, as upstream.
 */
export function compileWhere(
  q: FilterInput,
  scopeConds: readonly Condition[],
  scope: Scope,
  keywordKeys: readonly string[],
  ctx: Ctx,
  prefix: string,
  now: Date,
): string {
  const parts: string[] = [];
  scopeConds.forEach((c, i) => parts.push(compileCondition(c, scope, { ctx, errKey: `scope[${i}]`, now })));
  (q.filter ?? []).forEach((c, i) => parts.push(compileCondition(c, scope, { ctx, errKey: `${prefix}.filter[${i}]`, now })));
  const ors: string[] = [];
  (q.filter_or ?? []).forEach((c, i) => ors.push(compileCondition(c, scope, { ctx, errKey: `${prefix}.filter_or[${i}]`, now })));
  const tokens = keywordTokens(q.keyword);
  if (tokens.length > 0) {
    for (const key of keywordKeys) {
      ors.push(compileCondition({ key, value: tokens, operator: 'contain_in' }, scope, { ctx, errKey: `${prefix}.keyword`, now }));
    }
  }
  if (ors.length > 0) parts.push(ors.length === 1 ? ors[0] : `(${ors.join(' OR ')})`);
  return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
}

export function keywordTokens(keyword: string | null | undefined): string[] {
  if (typeof keyword !== 'string') return [];
  return keyword.trim().split(' ').filter((t) => t.length > 0);
}
