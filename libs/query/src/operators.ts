import { errors } from '@platform/errors';
import type { FieldType } from './resource';
import type { Ctx } from './sql';
import { checkRegex, expandMatch, isPlainObject, jsonScalar, jsonText, likePattern, scalarFor, textOf, valueErr, type Env } from './values';

/**
 * The filter operators as SQL on one value expression: the positive forms (eq, in, comparisons,
 * contain, regex, match) for each field type, with MongoDB's element-wise matching of arrays.
 * Negations and the datetime families are built on these by compileCondition (filter.ts).
 */

export type Positive =
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

function anyJson(x: string, pred: (v: string) => string, ctx: Ctx): string {
  const a = ctx.uid('e');
  return `(CASE WHEN jsonb_typeof(${x}) = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(${x}) AS ${a}(v) WHERE ${pred(`${a}.v`)}) ELSE ${pred(x)} END)`;
}

function anyText(x: string, pred: (v: string) => string, ctx: Ctx): string {
  const a = ctx.uid('e');
  return `EXISTS (SELECT 1 FROM unnest(${x}) AS ${a}(v) WHERE ${pred(`${a}.v`)})`;
}


/** SQL of a positive operator on a value expression x of `kind` (never an `each` ref). */
export function positive(kind: FieldType, x: string, op: Positive, v: unknown, env: Env): string {
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

