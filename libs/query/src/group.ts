import { errors } from '@platform/errors';
import { orderItem } from './base';
import { jsonScalar, jsonText, scalarFor, type Env } from './values';
import type { FieldType } from './resource';
import type { Condition, Granularity } from './schemas';
import type { Scope } from './scope';
import type { Ctx } from './sql';
import { toJson, toNum, type GroupFieldIR, type GroupKeyIR, type State } from './stage';
import type { DatePrecision } from './time';

/**
 * A `group` stage's parts as SQL: its keys (plain, `date_format`ted, or analyze's date bucketed at a
 * granularity) and its fields (MongoDB's accumulators: count, sum, average, max, min, first, last,
 * push, add_to_set, merge_objects, with optional `conditions`).
 */

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

export function groupKeyExpr(k: GroupKeyIR, scope: Scope, ctx: Ctx): { sql: string; kind: FieldType } {
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

export function groupFieldExpr(f: GroupFieldIR, st: State, scope: Scope, ctx: Ctx, now: Date): { sql: string; kind: FieldType } {
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

