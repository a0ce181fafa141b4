import { errors } from '@platform/errors';
import { arrayOrNull } from './scope';
import type { FieldType } from './resource';
import type { ProjectOperand } from './schemas';
import type { Scope } from './scope';
import type { Ctx } from './sql';
import { toNum, type ProjectFieldIR } from './stage';

/** A `project` stage's fields as SQL: a key as it is, or an operator (size, sum, pair conversions, arithmetic). */

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

export function projectExpr(f: ProjectFieldIR, onlyKeys: boolean, scope: Scope, ctx: Ctx): { sql: string; kind: FieldType } {
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

