import type { z } from 'zod';
import { errors, ZERO_ENUM } from '@platform/errors';

/**
 * proto3 defaults (docs/decisions/api.md, "proto3 clients"). Clients generated from upstream's
 * protobuf definitions cannot leave a scalar field out: an unset string is `""`, a number `0`, a bool
 * `false`, a repeated field `[]`, a map or Struct `{}`, an enum its zero value (`NONE`, `SCOPE_NONE`,
 * `NONE_FILE_FORMAT`, ...), and proto3 JSON allows `null` for any of them. For an OPTIONAL field of a
 * request such a value means "not set": it is taken out of the body before validation, at every level
 * the request schema describes (nested messages and the messages inside a list), so every operation
 * reads it as absent. A nested message left with no field set is itself not set.
 *
 * Required fields are left alone (an empty required string is still a 400), and so is the content of
 * free-form values (a Struct's entries, a filter's `value`): only fields a schema names are defaults.
 * A field whose zero value means something other than leaving it out is marked with `explicitZero`.
 *
 * protobuf's JSON names: a client using protobuf's JSON mapping (grpc-gateway, protobuf-es,
 * `MessageToJson`) sends lowerCamelCase names (`filterOr`, `parentGroupId`). Every field a schema names is
 * accepted in both spellings, at every level; a field given in both is a 400. Free-form values (tags,
 * options, data, secret_data: records and unknowns) are never renamed. Answers keep the proto names.
 */

type AnySchema = z.ZodType;
interface Def {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  out?: AnySchema;
  element?: AnySchema;
  shape?: Record<string, AnySchema>;
  options?: AnySchema[];
  getter?: () => AnySchema;
  entries?: Record<string, string | number>;
}

const defOf = (s: AnySchema): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
const isOptional = (s: AnySchema): boolean => (s as unknown as { _zod: { optin?: string } })._zod.optin === 'optional';

const EXPLICIT = new WeakSet<AnySchema>();

/**
 * Marks a request field whose zero value is meaningful and differs from leaving the field out (our own
 * operations only: a field of upstream's protos cannot have one). It keeps `""`/`0`/`false`/`NONE`.
 */
export function explicitZero<S extends AnySchema>(schema: S): S {
  EXPLICIT.add(schema);
  return schema;
}

export { ZERO_ENUM };

const BASES = new WeakMap<AnySchema, AnySchema>();

/**
 * The schema under wrappers (optional, nullable, default, preprocess, transform, lazy, ...), worked out
 * once per schema: every request walks the same operation schemas.
 */
function base(schema: AnySchema): AnySchema {
  let b = BASES.get(schema);
  if (b === undefined) BASES.set(schema, (b = unwrap(schema)));
  return b;
}

function unwrap(schema: AnySchema, depth = 0): AnySchema {
  let s = schema;
  for (let i = 0; i < 32; i++) {
    const d = defOf(s);
    switch (d.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'nonoptional':
      case 'readonly':
      case 'catch':
        s = d.innerType!;
        continue;
      case 'pipe':
        // preprocess is pipe(transform, schema); .transform() is pipe(schema, transform)
        s = defOf(d.in!).type === 'transform' ? d.out! : d.in!;
        continue;
      case 'lazy':
        if (depth > 8) return s;
        s = d.getter!();
        continue;
      default:
        return s;
    }
  }
  return s;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether `v` is the proto3 default of a field whose (unwrapped) schema is `s`. */
function isDefault(s: AnySchema, v: unknown): boolean {
  if (v === null) return true;
  const d = defOf(s);
  switch (d.type) {
    case 'string':
      return v === '';
    case 'number':
    case 'int':
    case 'bigint':
      return v === 0;
    case 'boolean':
      return v === false;
    case 'array':
      return Array.isArray(v) && v.length === 0;
    case 'object':
    case 'record':
      return isPlainObject(v) && Object.keys(v).length === 0;
    case 'enum':
      return v === '' || (typeof v === 'string' && ZERO_ENUM.test(v));
    case 'union':
      return (d.options ?? []).some((o) => isDefault(base(o), v));
    default:
      return false;
  }
}

/** protobuf's JSON name of a field: lowerCamelCase, each `_x` becoming `X` (`filter_or` -> `filterOr`). */
export function jsonName(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

const JSON_NAMES = new WeakMap<object, Map<string, string>>();

/** A shape's JSON names that differ from its proto names, to the proto name (worked out once per shape). */
function jsonNamesOf(shape: Record<string, AnySchema>): Map<string, string> {
  let names = JSON_NAMES.get(shape);
  if (!names) {
    names = new Map();
    for (const key of Object.keys(shape)) {
      const json = jsonName(key);
      if (json !== key && !Object.prototype.hasOwnProperty.call(shape, json)) names.set(json, key);
    }
    JSON_NAMES.set(shape, names);
  }
  return names;
}

/** A field sent in both spellings, with the path to it (each level of the walk adds its key). */
class BothSpellings {
  constructor(
    readonly path: (string | number)[],
    readonly other: string,
  ) {}
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Nested messages: the fields of an object, the messages of a list. */
function walk(schema: AnySchema, value: unknown, depth: number, keepDefaults = false): unknown {
  if (depth > 40) return value;
  const s = base(schema);
  const d = defOf(s);
  if (d.type === 'object' && isPlainObject(value)) {
    const shape = d.shape ?? {};
    let out: Record<string, unknown> | undefined;
    for (const sent of Object.keys(value)) {
      let key = sent;
      if (!hasOwn(shape, key)) {
        const proto = jsonNamesOf(shape).get(key);
        if (proto === undefined) continue; // unknown: validation names it
        if (hasOwn(value, proto)) throw new BothSpellings([sent], proto);
        key = proto;
      }
      const field = shape[key];
      const before = value[sent];
      let after: unknown;
      try {
        after = walk(field, before, depth + 1, keepDefaults);
      } catch (e) {
        if (e instanceof BothSpellings) e.path.unshift(key);
        throw e;
      }
      const drop = !keepDefaults && isOptional(field) && !EXPLICIT.has(field) && isDefault(base(field), after);
      if (drop || after !== before || key !== sent) {
        out ??= { ...value };
        if (key !== sent) delete out[sent];
        if (drop) delete out[key];
        else out[key] = after;
      }
    }
    return out ?? value;
  }
  if (d.type === 'array' && Array.isArray(value) && d.element) {
    const el = base(d.element);
    if (defOf(el).type !== 'object' && defOf(el).type !== 'union') return value;
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      let after: unknown;
      try {
        after = walk(el, item, depth + 1, keepDefaults);
      } catch (e) {
        if (e instanceof BothSpellings) e.path.unshift(i);
        throw e;
      }
      if (after !== item) (out ??= [...value])[i] = after;
    });
    return out ?? value;
  }
  if (d.type === 'union' && isPlainObject(value)) {
    // A message among other forms (a key or {key, name, ...}): the first object form that fits.
    for (const o of d.options ?? []) {
      if (defOf(base(o)).type === 'object') return walk(o, value, depth + 1, keepDefaults);
    }
  }
  return value;
}

const keyOf = (path: (string | number)[]) =>
  path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');

/**
 * The body with every field under its proto name and every optional field at its proto3 default taken
 * out (a new object when anything changed). A field sent in both spellings is ERROR_INVALID_PARAMETER.
 */
export function withoutProto3Defaults(schema: AnySchema, body: unknown): unknown {
  try {
    return walk(schema, body, 0);
  } catch (e) {
    if (!(e instanceof BothSpellings)) throw e;
    throw errors.invalidParameter(keyOf(e.path), `given twice, also as ${e.other}`);
  }
}

/**
 * The body with every field under its proto name and the proto3 defaults kept: what an operation's
 * OpenAPI document describes (libs/http contract.ts checks requests with it). Undefined when a field is
 * given in both spellings (the server refuses that request).
 */
export function withProtoNames(schema: AnySchema, body: unknown): unknown {
  try {
    return walk(schema, body, 0, true);
  } catch (e) {
    if (!(e instanceof BothSpellings)) throw e;
    return undefined;
  }
}
