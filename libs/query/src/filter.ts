import { errors } from '@platform/errors';
import type { Condition } from './schemas';
import { FILTER_OPERATORS, or, positive, type Positive } from './operators';
import { arrayOrNull, containmentPath, containsAt, type Ref, type Scope } from './scope';
import { Ctx } from './sql';
import { parseIso8601, parseTimediff } from './time';
import { scalarFor, valueErr, type Env } from './values';

/** The condition's operator, when known, with its value checked for it (a list or a single value...). */
function checkOperator(operator: unknown, value: unknown, env: Env): string {
  const info = typeof operator === 'string' && Object.hasOwn(FILTER_OPERATORS, operator) ? FILTER_OPERATORS[operator] : undefined;
  if (!info) throw errors.invalidParameter(`${env.errKey}.operator`, `unsupported operator "${String(operator)}"`);
  const op = operator as string;
  if (info.multiple && !Array.isArray(value)) throw valueErr(env, `${op} needs a list value`);
  if (!info.multiple && Array.isArray(value)) throw valueErr(env, `${op} needs a single value, not a list`);
  if (op === 'exists' && typeof value !== 'boolean') throw valueErr(env, 'exists needs a boolean value');
  if ((op === 'contain_in' || op === 'not_contain_in' || op === 'regex_in') && (value as unknown[]).length === 0) {
    throw valueErr(env, `${op} needs a non-empty list`);
  }
  return op;
}

/** A datetime_* / timediff_* condition as the comparison it stands for, with its ISO instant. */
function datetimeOperand(op: string, v: unknown, ref: Ref, env: Env): { op: string; v: unknown } {
  if (!/^(datetime|timediff|timedelta)_/.test(op)) return { op, v };
  if (ref.kind !== 'datetime') {
    throw errors.invalidParameter(`${env.errKey}.operator`, `${op} needs a datetime field`);
  }
  const [family, cmp] = op.split('_') as [string, 'lt' | 'lte' | 'gt' | 'gte'];
  const d = family === 'datetime' ? parseIso8601(v) : parseTimediff(v, env.now);
  if (!d) {
    throw valueErr(env, family === 'datetime' ? 'expected an ISO 8601 datetime' : 'expected a value like "now/d - 7d"');
  }
  return { op: cmp, v: d.toISOString() };
}

/** SQL of one filter condition. `errKey` names it in errors (`query.filter[0]`). */
export function compileCondition(cond: Condition, scope: Scope, env: Env): string {
  const { key } = cond;
  const value = cond.value === undefined ? null : cond.value;
  const operator = checkOperator(cond.operator, value, env);
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
  const { op, v } = datetimeOperand(operator, value, ref, env);

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