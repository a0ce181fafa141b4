import { UNSAFE_KEYS } from '@platform/core';
import { errors } from '@platform/errors';
import { baseScope, execute, orderItem, pageWindow, sortExprs, type SqlRunner } from './base';
import {
  arrayOrNull,
  compileWhere,
  jsonScalar,
  jsonText,
  scalarFor,
  Scope,
  type Col,
  type Env,
  type Ref,
} from './filter';
import type { CompileOptions } from './list';
import type { FieldType, Resource } from './resource';
import { QUERY_LIMITS, type Condition, type Granularity, type ProjectOperand, type SortItem, type StatisticsQuery } from './schemas';
import { Ctx, type CompiledSql } from './sql';
import type { DatePrecision } from './time';

// ------------------------------------------------------------------------------------------ pipeline IR

export interface GroupKeyIR {
  name: string;
  key: string;
  dateFormat?: string | null;
  /** analyze's `date` key: the date field bucketed at a granularity. */
  bucket?: Granularity;
  errKey: string;
}
export interface GroupFieldIR {
  name: string;
  operator: string;
  key?: string | null;
  fields?: { key: string; name: string }[] | null;
  conditions?: Condition[] | null;
  errKey: string;
}
export interface ProjectFieldIR {
  name: string;
  key?: string | null;
  operator?: string | null;
  fields?: ProjectOperand[] | null;
  errKey: string;
}
export type StageIR =
  | { type: 'group'; keys: GroupKeyIR[]; fields: GroupFieldIR[]; errKey: string }
  | { type: 'unwind'; path: string; filter?: Condition[] | null; errKey: string }
  | { type: 'match'; filter?: Condition[] | null; filter_or?: Condition[] | null; errKey: string }
  | { type: 'project'; fields: ProjectFieldIR[]; excludeKeys: boolean; onlyKeys: boolean; errKey: string }
  | { type: 'sort'; sort: SortItem[]; errKey: string }
  | { type: 'limit' | 'skip'; n: number; errKey: string }
  | { type: 'count'; name: string; errKey: string };

interface StCol {
  ident: string;
  kind: FieldType;
  notNull?: boolean;
  dateFormat?: DatePrecision;
}
interface OrderCol {
  ident: string;
  desc: boolean;
  notNull?: boolean;
}
interface State {
  alias: string;
  cols: Map<string, StCol>;
  order: OrderCol[] | null;
  groupKeys: string[];
  baseId?: string;
}

const NUMERIC: readonly FieldType[] = ['number', 'integer'];
const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

function scopeOf(st: State): Scope {
  const cols = new Map<string, Col>();
  for (const [name, c] of st.cols) {
    cols.set(name, { sql: `${st.alias}.${c.ident}`, kind: c.kind, notNull: c.notNull, dateFormat: c.dateFormat });
  }
  return new Scope(cols);
}

export function toNum(ref: Pick<Ref, 'sql' | 'kind'>): string {
  if (NUMERIC.includes(ref.kind)) return `(${ref.sql})::float8`;
  if (ref.kind === 'json' || ref.kind === 'json_array') {
    return `(CASE WHEN jsonb_typeof(${ref.sql}) = 'number' THEN (${ref.sql})::float8 END)`;
  }
  return 'NULL::float8';
}

export function toJson(ref: Pick<Ref, 'sql' | 'kind'>): string {
  if (ref.kind === 'json' || ref.kind === 'json_array') return ref.sql;
  if (ref.kind === 'datetime') return `to_jsonb(to_char(${ref.sql} AT TIME ZONE 'UTC', ${UTC_ISO}))`;
  return `to_jsonb(${ref.sql})`;
}

const STRFTIME: Record<string, string> = {
  Y: 'YYYY',
  m: 'MM',
  d: 'DD',
  H: 'HH24',
  M: 'MI',
  S: 'SS',
  L: 'MS',
  j: 'DDD',
  y: 'YY',
  B: 'FMMonth',
  b: 'Mon',
  A: 'FMDay',
  a: 'Dy',
};

/** A MongoDB `$dateToString` (strftime) format as a to_char format; null when it uses an unknown specifier. */
export function strftimeToPg(fmt: string): string | null {
  let out = '';
  let lit = '';
  const flush = () => {
    if (lit) out += `"${lit.replace(/["\\]/g, (c) => `\\${c}`)}"`;
    lit = '';
  };
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i];
    if (c !== '%') {
      lit += c;
      continue;
    }
    const s = fmt[++i];
    if (s === '%') {
      lit += '%';
      continue;
    }
    const pg = s === undefined ? undefined : STRFTIME[s];
    if (!pg) return null;
    flush();
    out += pg;
  }
  flush();
  return out;
}

const BUCKET: Record<Granularity, DatePrecision> = { DAILY: 'YYYY-MM-DD', MONTHLY: 'YYYY-MM', YEARLY: 'YYYY' };

function groupKeyExpr(k: GroupKeyIR, scope: Scope, ctx: Ctx): { sql: string; kind: FieldType } {
  const ref = scope.resolve(k.key, `${k.errKey}.key`, ctx);
  if (k.bucket) {
    const prec = BUCKET[k.bucket];
    if (ref.kind === 'datetime') return { sql: `to_char(${ref.sql} AT TIME ZONE 'UTC', '${prec}')`, kind: 'string' };
    if (ref.kind === 'string') {
      const have = ref.dateFormat ?? 'YYYY-MM-DD';
      if (have.length < prec.length) {
        throw errors.invalidParameter(k.errKey.replace(/\.date$/, '.granularity'), `${k.bucket} is not supported by the date field`);
      }
      // A column declared in the bucket's own format (billed_month, YYYY-MM, by month) is its own key:
      // grouping on the column as it is lets PostgreSQL use its index order and statistics.
      if (have === prec) return { sql: ref.sql, kind: 'string' };
      return { sql: `left(${ref.sql}, ${prec.length})`, kind: 'string' };
    }
    throw errors.invalidParameter(k.errKey, 'the date field must hold dates');
  }
  if (k.dateFormat) {
    if (ref.kind !== 'datetime') throw errors.invalidParameter(`${k.errKey}.date_format`, 'date_format needs a datetime key');
    const utc = `(${ref.sql} AT TIME ZONE 'UTC')`;
    if (k.dateFormat === 'year') return { sql: `(extract(year FROM ${utc}))::int`, kind: 'integer' };
    if (k.dateFormat === 'month') return { sql: `(extract(month FROM ${utc}))::int`, kind: 'integer' };
    if (k.dateFormat === 'day') return { sql: `(extract(day FROM ${utc}))::int`, kind: 'integer' };
    const pg = strftimeToPg(k.dateFormat);
    if (!pg) throw errors.invalidParameter(`${k.errKey}.date_format`, 'unsupported date format');
    return { sql: `to_char(${utc}, ${ctx.add(pg, 'text')})`, kind: 'string' };
  }
  return { sql: ref.sql, kind: ref.kind };
}

const SUB_OPS = ['eq', 'not', 'gt', 'gte', 'lt', 'lte'];

/** A group field's `conditions` ($cond of MongoDB aggregation comparisons: null/missing sorts lowest). */
function subConditions(conds: Condition[], scope: Scope, ctx: Ctx, errKey: string, now: Date): string {
  const parts = conds.map((c, i) => {
    const ek = `${errKey}.conditions[${i}]`;
    if (!SUB_OPS.includes(c.operator)) throw errors.invalidParameter(`${ek}.operator`, `supported operators: ${SUB_OPS.join(', ')}`);
    if (c.value === null || c.value === undefined || Array.isArray(c.value)) {
      throw errors.invalidParameter(`${ek}.value`, 'a single value is required');
    }
    const ref = scope.resolve(c.key, `${ek}.key`, ctx);
    const env: Env = { ctx, errKey: ek, now };
    const x = ref.sql;
    const sym = { eq: '=', not: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }[c.operator] as string;
    if (ref.kind === 'json' || ref.kind === 'json_array') {
      const j = jsonScalar(c.value, env);
      const v = ctx.add(jsonText(j), 'jsonb');
      if (c.operator === 'eq') return `COALESCE(${x} = ${v}, FALSE)`;
      if (c.operator === 'not') return `(${x} IS DISTINCT FROM ${v})`;
      const t = typeof j === 'number' ? 'number' : typeof j === 'string' ? 'string' : typeof j === 'boolean' ? 'boolean' : 'object';
      const typed = `(jsonb_typeof(${x}) = '${t}' AND ${x} ${sym} ${v})`;
      return c.operator.startsWith('l') ? `(${typed} OR ${x} IS NULL OR ${x} = 'null'::jsonb)` : `COALESCE(${typed}, FALSE)`;
    }
    if (ref.kind === 'string_array') throw errors.invalidParameter(`${ek}.key`, 'conditions need a single-valued key');
    const v = ctx.add(scalarFor(ref.kind, c.value, env));
    if (c.operator === 'not') return `(${x} IS DISTINCT FROM ${v})`;
    if (c.operator.startsWith('l')) return `(${x} ${sym} ${v} OR ${x} IS NULL)`;
    return `COALESCE(${x} ${sym} ${v}, FALSE)`;
  });
  return parts.length === 0 ? 'TRUE' : `(${parts.join(' AND ')})`;
}

export const GROUP_OPERATORS = [
  'count',
  'sum',
  'average',
  'max',
  'min',
  'first',
  'last',
  'push',
  'add_to_set',
  'merge_objects',
] as const;

function aggOrder(st: State, reverse = false): string {
  const items = st.order
    ? st.order.map((o) => orderItem({ sql: `${st.alias}.${o.ident}`, notNull: o.notNull }, reverse ? !o.desc : o.desc))
    : st.baseId
      ? [`${st.alias}.${st.baseId} ${reverse ? 'DESC' : 'ASC'}`]
      : [];
  return items.length ? ` ORDER BY ${items.join(', ')}` : '';
}

function groupFieldExpr(f: GroupFieldIR, st: State, scope: Scope, ctx: Ctx, now: Date): { sql: string; kind: FieldType } {
  const op = f.operator;
  if (!(GROUP_OPERATORS as readonly string[]).includes(op)) {
    throw errors.invalidParameter(`${f.errKey}.operator`, `supported operators: ${GROUP_OPERATORS.join(', ')}`);
  }
  const cond = f.conditions && f.conditions.length ? subConditions(f.conditions, scope, ctx, f.errKey, now) : null;
  if (cond && !['count', 'sum', 'average'].includes(op)) {
    throw errors.invalidParameter(`${f.errKey}.conditions`, `conditions are not supported by ${op}`);
  }
  const ord = aggOrder(st);
  if (op === 'count') return { sql: cond ? `(count(*) FILTER (WHERE ${cond}))::float8` : 'count(*)::float8', kind: 'number' };
  if (op === 'push' && !f.key) {
    if (!f.fields || f.fields.length === 0) throw errors.requiredParameter(`${f.errKey}.key`);
    const parts = f.fields.map((sf, i) => {
      const r = scope.resolve(sf.key, `${f.errKey}.fields[${i}].key`, ctx);
      return `${ctx.add(sf.name, 'text')}, ${toJson(r)}`;
    });
    return { sql: `COALESCE(jsonb_agg(jsonb_build_object(${parts.join(', ')})${ord}), '[]'::jsonb)`, kind: 'json' };
  }
  if (!f.key) throw errors.requiredParameter(`${f.errKey}.key`);
  const ref = scope.resolve(f.key, `${f.errKey}.key`, ctx);
  const x = ref.sql;
  const isJson = ref.kind === 'json' || ref.kind === 'json_array';
  switch (op) {
    case 'sum':
      return { sql: `COALESCE(sum(${toNum(ref)})${cond ? ` FILTER (WHERE ${cond})` : ''}, 0)::float8`, kind: 'number' };
    case 'average':
      return { sql: `(avg(${cond ? `CASE WHEN ${cond} THEN ${toNum(ref)} ELSE 0 END` : toNum(ref)}))::float8`, kind: 'number' };
    case 'max':
    case 'min': {
      if (isJson) {
        return {
          sql: `(array_agg(${x} ORDER BY ${x} ${op === 'max' ? 'DESC' : 'ASC'}) FILTER (WHERE ${x} IS NOT NULL AND ${x} <> 'null'::jsonb))[1]`,
          kind: 'json',
        };
      }
      if (ref.kind === 'boolean') return { sql: `${op === 'max' ? 'bool_or' : 'bool_and'}(${x})`, kind: 'boolean' };
      return { sql: `${op}(${x})`, kind: ref.kind };
    }
    case 'first':
    case 'last': {
      if (isJson || ref.kind === 'string_array') {
        return { sql: `(jsonb_agg(${toJson(ref)}${ord}) -> ${op === 'first' ? '0' : '-1'})`, kind: 'json' };
      }
      return { sql: `(array_agg(${x}${aggOrder(st, op === 'last')}))[1]`, kind: ref.kind };
    }
    case 'push':
      return { sql: `COALESCE(jsonb_agg(${toJson(ref)}${ord}) FILTER (WHERE ${x} IS NOT NULL), '[]'::jsonb)`, kind: 'json' };
    case 'add_to_set':
      return { sql: `COALESCE(jsonb_agg(DISTINCT ${toJson(ref)}) FILTER (WHERE ${x} IS NOT NULL), '[]'::jsonb)`, kind: 'json' };
    default: {
      // merge_objects: later documents' keys win.
      if (!isJson) throw errors.invalidParameter(`${f.errKey}.key`, 'merge_objects needs an object field');
      const o = ctx.uid('o');
      const m = ctx.uid('m');
      return {
        sql: `COALESCE((SELECT jsonb_object_agg(${m}.key, ${m}.value ORDER BY ${o}.i) FROM jsonb_array_elements(jsonb_agg(${x}${ord}) FILTER (WHERE jsonb_typeof(${x}) = 'object')) WITH ORDINALITY AS ${o}(obj, i), jsonb_each(${o}.obj) AS ${m}), '{}'::jsonb)`,
        kind: 'json',
      };
    }
  }
}

export const PROJECT_OPERATORS = ['size', 'sum', 'array_to_object', 'object_to_array', 'add', 'subtract', 'multiply', 'divide'];
const ARITH: Record<string, string> = { add: '+', subtract: '-', multiply: '*', divide: '/' };

function arith(op: string, operands: ProjectOperand[] | null | undefined, scope: Scope, ctx: Ctx, errKey: string): string {
  if (!ARITH[op]) throw errors.invalidParameter(`${errKey}.operator`, 'supported operators: add, subtract, multiply, divide');
  if (!operands || operands.length === 0) throw errors.requiredParameter(`${errKey}.fields`);
  if ((op === 'subtract' || op === 'divide') && operands.length !== 2) {
    throw errors.invalidParameter(`${errKey}.fields`, `${op} needs two fields`);
  }
  const terms = operands.map((o, i) => {
    if (typeof o === 'number') return ctx.add(o, 'float8');
    if (typeof o === 'string') return toNum(scope.resolve(o, `${errKey}.fields[${i}]`, ctx));
    return arith(o.operator, o.fields, scope, ctx, `${errKey}.fields[${i}]`);
  });
  if (op === 'divide') return `(${terms[0]} / NULLIF(${terms[1]}, 0))`;
  return `(${terms.join(` ${ARITH[op]} `)})`;
}

function projectExpr(f: ProjectFieldIR, onlyKeys: boolean, scope: Scope, ctx: Ctx): { sql: string; kind: FieldType } {
  const op = f.operator;
  if (!op) {
    const key = f.key ?? (onlyKeys ? f.name : null);
    if (!key) throw errors.requiredParameter(`${f.errKey}.key`);
    const r = scope.resolve(key, `${f.errKey}.key`, ctx);
    return { sql: r.sql, kind: r.kind };
  }
  if (!PROJECT_OPERATORS.includes(op)) {
    throw errors.invalidParameter(`${f.errKey}.operator`, `supported operators: ${PROJECT_OPERATORS.join(', ')}`);
  }
  if (ARITH[op]) return { sql: arith(op, f.fields, scope, ctx, f.errKey), kind: 'number' };
  if (!f.key) throw errors.requiredParameter(`${f.errKey}.key`);
  const r = scope.resolve(f.key, `${f.errKey}.key`, ctx);
  const isJson = r.kind === 'json' || r.kind === 'json_array';
  const e = ctx.uid('e');
  switch (op) {
    case 'size':
      if (r.kind === 'string_array') return { sql: `cardinality(${r.sql})`, kind: 'integer' };
      if (isJson) return { sql: `(CASE WHEN jsonb_typeof(${r.sql}) = 'array' THEN jsonb_array_length(${r.sql}) END)`, kind: 'integer' };
      throw errors.invalidParameter(`${f.errKey}.key`, 'size needs an array');
    case 'sum':
      if (isJson) {
        return {
          sql: `(SELECT COALESCE(sum((${e}.v)::float8), 0) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${r.sql}) = 'array' THEN ${r.sql} ELSE jsonb_build_array(${r.sql}) END) AS ${e}(v) WHERE jsonb_typeof(${e}.v) = 'number')`,
          kind: 'number',
        };
      }
      return { sql: `COALESCE(${toNum(r)}, 0)`, kind: 'number' };
    case 'array_to_object':
      if (!isJson) throw errors.invalidParameter(`${f.errKey}.key`, 'array_to_object needs an array of pairs');
      return {
        sql: `(SELECT jsonb_object_agg(COALESCE(${e}.v ->> 'k', ${e}.v ->> 0), COALESCE(${e}.v -> 'v', ${e}.v -> 1) ORDER BY ${e}.i) FROM jsonb_array_elements(${arrayOrNull(r.sql)}) WITH ORDINALITY AS ${e}(v, i))`,
        kind: 'json',
      };
    default:
      if (!isJson) throw errors.invalidParameter(`${f.errKey}.key`, 'object_to_array needs an object');
      return {
        sql: `(CASE WHEN jsonb_typeof(${r.sql}) = 'object' THEN (SELECT COALESCE(jsonb_agg(jsonb_build_object('k', ${e}.key, 'v', ${e}.value)), '[]'::jsonb) FROM jsonb_each(${r.sql}) AS ${e}) END)`,
        kind: 'json',
      };
  }
}

export interface Pipeline {
  ctes: string[];
  state: State;
}

/** Stages as CTEs over `s0`, the filtered rows of the resource's table. */
export function compilePipeline(resource: Resource, where: string, stages: StageIR[], ctx: Ctx, now: Date): Pipeline {
  const ctes = [`s0 AS (SELECT * FROM ${resource.table} AS t WHERE ${where})`];
  const cols = new Map<string, StCol>();
  for (const f of resource.fields.values()) cols.set(f.key, { ident: f.column, kind: f.type, notNull: f.notNull, dateFormat: f.dateFormat });
  let st: State = { alias: 's0', cols, order: null, groupKeys: [], baseId: resource.fields.get(resource.idKey)?.column };
  let n = 0;
  const push = (sql: string, next: Omit<State, 'alias'>) => {
    n += 1;
    const alias = `s${n}`;
    ctes.push(`${alias} AS (${sql})`);
    st = { ...next, alias };
  };
  const orderBy = (s: State) =>
    s.order
      ? ` ORDER BY ${s.order.map((o) => orderItem({ sql: `${s.alias}.${o.ident}`, notNull: o.notNull }, o.desc)).join(', ')}`
      : s.baseId
        ? ` ORDER BY ${s.alias}.${s.baseId}`
        : '';

  for (const stage of stages) {
    const scope = scopeOf(st);
    switch (stage.type) {
      case 'match': {
        const w = compileWhere({ filter: stage.filter, filter_or: stage.filter_or }, [], scope, [], ctx, stage.errKey, now);
        push(`SELECT ${st.alias}.* FROM ${st.alias} WHERE ${w}`, st);
        break;
      }
      case 'unwind': {
        const ref = scope.resolve(stage.path, `${stage.errKey}.path`, ctx);
        const ident = ctx.uid('u');
        const u = ctx.uid('l');
        let fn: string | null = null;
        let kind: FieldType = ref.kind;
        if (ref.kind === 'string_array') {
          fn = `unnest(${ref.sql})`;
          kind = 'string';
        } else if (ref.kind === 'json' || ref.kind === 'json_array') {
          fn = `jsonb_array_elements(CASE WHEN jsonb_typeof(${ref.sql}) = 'array' THEN ${ref.sql} WHEN ${ref.sql} IS NULL OR ${ref.sql} = 'null'::jsonb THEN NULL ELSE jsonb_build_array(${ref.sql}) END)`;
          kind = 'json';
        }
        if (fn) {
          const next = new Map(st.cols);
          next.set(stage.path, { ident, kind });
          push(`SELECT ${st.alias}.*, ${u}.v AS ${ident} FROM ${st.alias} CROSS JOIN LATERAL ${fn} AS ${u}(v)`, { ...st, cols: next });
        } else {
          push(`SELECT ${st.alias}.* FROM ${st.alias} WHERE ${ref.sql} IS NOT NULL`, st);
        }
        if (stage.filter && stage.filter.length) {
          const w = compileWhere({ filter: stage.filter }, [], scopeOf(st), [], ctx, stage.errKey, now);
          push(`SELECT ${st.alias}.* FROM ${st.alias} WHERE ${w}`, st);
        }
        break;
      }
      case 'group': {
        if (stage.keys.length === 0 && stage.fields.length === 0) throw errors.requiredParameter(`${stage.errKey}.keys`);
        const sel: string[] = [];
        const next = new Map<string, StCol>();
        const names = new Set<string>();
        const groupKeys: string[] = [];
        const dup = (name: string, errKey: string) => {
          if (names.has(name)) throw errors.invalidParameter(`${errKey}.name`, `duplicate name "${name}"`);
          names.add(name);
        };
        for (const k of stage.keys) {
          dup(k.name, k.errKey);
          const e = groupKeyExpr(k, scope, ctx);
          const ident = ctx.uid('g');
          sel.push(`${e.sql} AS ${ident}`);
          next.set(k.name, { ident, kind: e.kind });
          groupKeys.push(k.name);
        }
        for (const f of stage.fields) {
          dup(f.name, f.errKey);
          const e = groupFieldExpr(f, st, scope, ctx, now);
          const ident = ctx.uid('f');
          sel.push(`${e.sql} AS ${ident}`);
          next.set(f.name, { ident, kind: e.kind });
        }
        const by = stage.keys.length
          ? ` GROUP BY ${stage.keys.map((_, i) => String(i + 1)).join(', ')}`
          : ' HAVING count(*) > 0';
        push(`SELECT ${sel.join(', ')} FROM ${st.alias}${by}`, { cols: next, order: null, groupKeys, baseId: undefined });
        break;
      }
      case 'project': {
        if (stage.fields.length === 0) throw errors.requiredParameter(`${stage.errKey}.fields`);
        const sel: string[] = [];
        const next = new Map<string, StCol>();
        if (!stage.excludeKeys) {
          for (const name of st.groupKeys) {
            const c = st.cols.get(name);
            if (c) {
              sel.push(`${st.alias}.${c.ident} AS ${c.ident}`);
              next.set(name, c);
            }
          }
        }
        for (const f of stage.fields) {
          const e = projectExpr(f, stage.onlyKeys, scope, ctx);
          const ident = ctx.uid('p');
          sel.push(`${e.sql} AS ${ident}`);
          next.set(f.name, { ident, kind: e.kind });
        }
        for (const o of st.order ?? []) sel.push(`${st.alias}.${o.ident} AS ${o.ident}`);
        push(`SELECT ${sel.join(', ')} FROM ${st.alias}`, {
          cols: next,
          order: st.order,
          groupKeys: stage.excludeKeys ? [] : st.groupKeys.filter((k) => next.has(k)),
          baseId: undefined,
        });
        break;
      }
      case 'sort': {
        if (stage.sort.length === 0) break;
        const sel: string[] = [`${st.alias}.*`];
        const order: OrderCol[] = stage.sort.flatMap((s, i) => {
          const r = scope.resolve(s.key, `${stage.errKey}[${i}].key`, ctx);
          return sortExprs(r).map((e) => {
            const ident = ctx.uid('o');
            sel.push(`${e.sql} AS ${ident}`);
            return { ident, desc: Boolean(s.desc), notNull: e.notNull };
          });
        });
        if (st.baseId) order.push({ ident: st.baseId, desc: false, notNull: true });
        push(`SELECT ${sel.join(', ')} FROM ${st.alias}`, { ...st, order });
        break;
      }
      case 'limit':
      case 'skip': {
        if (!Number.isInteger(stage.n) || stage.n < (stage.type === 'limit' ? 1 : 0)) {
          throw errors.invalidParameter(stage.errKey, `${stage.type} must be ${stage.type === 'limit' ? 'a positive' : 'a non-negative'} integer`);
        }
        const clause = stage.type === 'limit' ? 'LIMIT' : 'OFFSET';
        push(`SELECT ${st.alias}.* FROM ${st.alias}${orderBy(st)} ${clause} ${ctx.add(stage.n, 'int8')}`, st);
        break;
      }
      case 'count': {
        const ident = ctx.uid('c');
        push(`SELECT count(*)::float8 AS ${ident} FROM ${st.alias} HAVING count(*) > 0`, {
          cols: new Map([[stage.name, { ident, kind: 'number' as FieldType }]]),
          order: null,
          groupKeys: [],
          baseId: undefined,
        });
        break;
      }
    }
  }
  return { ctes, state: st };
}

/** The final SELECT list of a pipeline and how to turn its rows into answer objects. */
export function finalSelect(st: State): { list: string; toObject: (row: Record<string, unknown>) => Record<string, unknown> } {
  const entries = [...st.cols.entries()];
  const list = entries.map(([, c], i) => {
    const v = `${st.alias}.${c.ident}`;
    return `${NUMERIC.includes(c.kind) ? `(${v})::float8` : v} AS __qv${i}`;
  });
  const order = entries
    .map(([name], i) => ({ name, i, dotted: name.includes('.') }))
    .sort((a, b) => Number(a.dotted) - Number(b.dotted) || a.name.length - b.name.length);
  return {
    list: list.join(', '),
    toObject(row) {
      const out: Record<string, unknown> = {};
      for (const { name, i, dotted } of order) {
        const v = row[`__qv${i}`];
        if (!dotted) out[name] = v;
        else setPath(out, name.split('.'), v);
      }
      return out;
    },
  };
}

function setPath(obj: Record<string, unknown>, segs: string[], v: unknown): void {
  if (segs.some((s) => UNSAFE_KEYS.has(s))) return; // names are checked by KeySchema; never a path into a prototype
  let cur = obj;
  for (const s of segs.slice(0, -1)) {
    const next = Object.hasOwn(cur, s) ? cur[s] : undefined;
    cur[s] = next && typeof next === 'object' && !Array.isArray(next) && !(next instanceof Date) ? { ...(next as object) } : {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]] = v;
}

export function finalOrder(st: State): string {
  if (!st.order) return st.baseId ? ` ORDER BY ${st.alias}.${st.baseId}` : '';
  return ` ORDER BY ${st.order.map((o) => orderItem({ sql: `${st.alias}.${o.ident}`, notNull: o.notNull }, o.desc)).join(', ')}`;
}

// ------------------------------------------------------------------------------------------ StatisticsQuery

function stagesOf(aggregate: NonNullable<StatisticsQuery['aggregate']>, prefix: string): StageIR[] {
  return aggregate.map((s, i): StageIR => {
    const base = `${prefix}.aggregate[${i}]`;
    const present = (['group', 'unwind', 'count', 'sort', 'limit', 'skip', 'match', 'project'] as const).filter(
      (k) => s[k] !== undefined,
    );
    if (present.length !== 1) {
      throw errors.invalidParameter(base, 'each stage has exactly one of group, unwind, count, sort, limit, skip, match, project');
    }
    const errKey = `${base}.${present[0]}`;
    if (s.group) {
      return {
        type: 'group',
        errKey,
        keys: (s.group.keys ?? []).map((k, j) => ({ key: k.key, name: k.name, dateFormat: k.date_format, errKey: `${errKey}.keys[${j}]` })),
        fields: (s.group.fields ?? []).map((f, j) => ({ ...f, errKey: `${errKey}.fields[${j}]` })),
      };
    }
    if (s.unwind) return { type: 'unwind', path: s.unwind.path, filter: s.unwind.filter, errKey };
    if (s.count) return { type: 'count', name: s.count.name, errKey };
    if (s.sort) return { type: 'sort', sort: s.sort, errKey };
    if (s.limit !== undefined) return { type: 'limit', n: s.limit, errKey };
    if (s.skip !== undefined) return { type: 'skip', n: s.skip, errKey };
    if (s.match) return { type: 'match', filter: s.match.filter, filter_or: s.match.filter_or, errKey };
    const p = s.project as NonNullable<typeof s.project>;
    return {
      type: 'project',
      errKey,
      excludeKeys: Boolean(p.exclude_keys),
      onlyKeys: Boolean(p.only_keys),
      fields: p.fields.map((f, j) => ({ ...f, errKey: `${errKey}.fields[${j}]` })),
    };
  });
}

export interface CompiledStat extends CompiledSql {
  kind: 'aggregate' | 'distinct';
  paged: boolean;
  /** The most rows the answer holds; `clamped`: page.limit asked for more. */
  cap: number;
  clamped: boolean;
  offset?: number;
  toObject?: (row: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The final SELECT of a stat or distinct, never more than `cap` rows: without `page.limit` it reads
 * `cap + 1` (one more tells the answer was cut); a `page.limit` past the cap is lowered to it.
 */
function pagedSelect(ctes: string[], from: string, list: string, order: string, page: StatisticsQuery['page'], ctx: Ctx, cap: number) {
  const asked = pageWindow(page);
  const win = pageWindow(page, cap);
  const withs = `WITH ${ctes.join(', ')} `;
  if (asked.limit === null) return { text: `${withs}SELECT ${list} FROM ${from}${order} LIMIT ${ctx.add(cap + 1, 'int8')}`, paged: false, clamped: false };
  let p = `SELECT ${list}, 1 AS __qrow FROM ${from}${order} LIMIT ${ctx.add(win.limit, 'int8')}`;
  if (win.offset > 0) p += ` OFFSET ${ctx.add(win.offset, 'int8')}`;
  return {
    text: `${withs}SELECT c.__qtotal, p.* FROM (SELECT count(*)::float8 AS __qtotal FROM ${from}) AS c LEFT JOIN LATERAL (${p}) AS p ON TRUE`,
    paged: true,
    clamped: (asked.limit as number) > cap,
    offset: win.offset,
  };
}

export function compileStat(
  resource: Resource,
  query: StatisticsQuery,
  scopeConds: readonly Condition[],
  opts: CompileOptions = {},
): CompiledStat {
  const prefix = opts.prefix ?? 'query';
  const now = opts.now ?? new Date();
  const cap = opts.maxResults ?? QUERY_LIMITS.results;
  const ctx = new Ctx();
  if (!query || (!query.aggregate?.length && !query.distinct)) throw errors.requiredParameter(`${prefix}.aggregate`);
  const where = compileWhere(query, scopeConds, baseScope(resource, 't'), resource.keywordKeys, ctx, prefix, now);
  if (query.aggregate?.length) {
    const { ctes, state } = compilePipeline(resource, where, stagesOf(query.aggregate, prefix), ctx, now);
    const fin = finalSelect(state);
    const sel = pagedSelect(ctes, state.alias, fin.list, finalOrder(state), query.page, ctx, cap);
    return { text: sel.text, values: ctx.values, kind: 'aggregate', paged: sel.paged, cap, clamped: sel.clamped, offset: sel.offset, toObject: fin.toObject };
  }
  // distinct: the sorted distinct values; array fields contribute their elements (as MongoDB's distinct).
  const ctes = [`s0 AS (SELECT * FROM ${resource.table} AS t WHERE ${where})`];
  const ref = baseScope(resource, 's0').resolve(query.distinct, `${prefix}.distinct`, ctx);
  let inner: string;
  if (ref.kind === 'string_array') {
    inner = `SELECT DISTINCT d.v FROM s0 CROSS JOIN LATERAL unnest(${ref.sql}) AS d(v) WHERE d.v IS NOT NULL`;
  } else if (ref.kind === 'json' || ref.kind === 'json_array') {
    inner = `SELECT DISTINCT d.v FROM s0 CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(${ref.sql}) = 'array' THEN ${ref.sql} ELSE jsonb_build_array(${ref.sql}) END) AS d(v) WHERE d.v IS NOT NULL AND d.v <> 'null'::jsonb`;
  } else {
    const v = NUMERIC.includes(ref.kind) ? `(${ref.sql})::float8` : ref.sql;
    inner = `SELECT DISTINCT ${v} AS v FROM s0 WHERE ${ref.sql} IS NOT NULL`;
  }
  ctes.push(`d AS (${inner})`);
  const sel = pagedSelect(ctes, 'd', 'd.v AS __qv', ' ORDER BY d.v', query.page, ctx, cap);
  return { text: sel.text, values: ctx.values, kind: 'distinct', paged: sel.paged, cap, clamped: sel.clamped, offset: sel.offset };
}

/**
 * stat: upstream's answer, `{results}` plus `total_count` when `page.limit` is set, and `more: true`
 * when the answer stops at the cap (QUERY_LIMITS.results) with rows left.
 */
export async function runStat(
  db: SqlRunner,
  resource: Resource,
  query: StatisticsQuery,
  scope: Condition[],
  opts: CompileOptions = {},
): Promise<Record<string, unknown>> {
  const c = compileStat(resource, query, scope, opts);
  const rows = await execute(db, c.text, c.values, opts.prefix ?? 'query');
  let live = c.paged ? rows.filter((r) => r.__qrow !== null && r.__qrow !== undefined) : rows;
  let more = false;
  if (!c.paged && live.length > c.cap) {
    live = live.slice(0, c.cap);
    more = true;
  }
  const results = c.kind === 'distinct' ? live.map((r) => r.__qv) : live.map((r) => (c.toObject as NonNullable<CompiledStat['toObject']>)(r));
  const out: Record<string, unknown> = { results };
  if (c.paged) {
    out.total_count = Number(rows[0]?.__qtotal ?? 0);
    if (c.clamped && (c.offset ?? 0) + live.length < (out.total_count as number)) more = true;
  }
  if (more) out.more = true;
  return out;
}
