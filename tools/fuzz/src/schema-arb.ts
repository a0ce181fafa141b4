import fc from 'fast-check';

/** The part of JSON Schema (2020-12, as zod 4's toJSONSchema writes it) the fuzzer reads. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  default?: unknown;
}

/**
 * Realistic values by where they sit: `path` is the property names from the body's root (`[]` for an
 * array's items, `{}` for a record's values). Answers undefined to let the schema decide.
 */
export type Hints = (path: string[], schema: JsonSchema, sub: (schema: JsonSchema) => fc.Arbitrary<unknown>) => fc.Arbitrary<unknown> | undefined;

/** A small identifier-like string, the shape most ids and names have. */
export const identifier = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);

const MAX_DEPTH = 12;
const MAX_ITEMS = 4;

/** Any JSON value, shallow: what a `{}` schema (tags values, data, options) accepts. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3, depthSize: 'small' });

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 24, 24));
  // Identifiers of 1 to 12 characters, built within the bounds (never filtered into them: a
  // `maxLength: 0` field once made a filter loop for ever), where the bounds allow one.
  const idMin = Math.max(1, minLength);
  const idMax = Math.min(12, s.maxLength ?? 12);
  return fc.oneof(
    ...(idMin <= idMax ? [{ weight: 4, arbitrary: fc.stringMatching(new RegExp(`^[a-z][a-z0-9_-]{${idMin - 1},${idMax - 1}}$`)) }] : []),
    { weight: 2, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: 'binary' }) },
  );
}

function integerArb(s: JsonSchema): fc.Arbitrary<number> {
  let min = Math.max(s.minimum ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER);
  let max = Math.min(s.maximum ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  if (s.exclusiveMinimum !== undefined) min = Math.max(min, Math.floor(s.exclusiveMinimum) + 1);
  if (s.exclusiveMaximum !== undefined) max = Math.min(max, Math.ceil(s.exclusiveMaximum) - 1);
  const small = fc.integer({ min: Math.max(min, -10), max: Math.min(max, 100) });
  return min <= max ? fc.oneof({ weight: 3, arbitrary: min <= 100 && max >= -10 ? small : fc.constant(min) }, { weight: 1, arbitrary: fc.integer({ min, max }) }) : fc.constant(min);
}

function numberArb(s: JsonSchema): fc.Arbitrary<number> {
  const min = s.minimum ?? s.exclusiveMinimum;
  const max = s.maximum ?? s.exclusiveMaximum;
  return fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(min !== undefined && { min, minExcluded: s.exclusiveMinimum !== undefined }),
    ...(max !== undefined && { max, maxExcluded: s.exclusiveMaximum !== undefined }),
  });
}

/** An arbitrary of values valid (or nearly) for `schema`; `root` resolves `$ref`s. */
export function arbitraryOf(schema: JsonSchema, root: JsonSchema, hints: Hints, path: string[] = [], depth = 0, skipHint = false): fc.Arbitrary<unknown> {
  // `sub` builds a part of the schema the normal way (a hint may pick among its branches).
  const hinted = skipHint ? undefined : hints(path, schema, (part) => arbitraryOf(part, root, hints, path, depth + 1, true));
  if (hinted) return hinted;
  if (depth > MAX_DEPTH) return fc.constant(null);
  if (schema.$ref) {
    // A schema's own `$defs`, or an OpenAPI document's components (runner.ts hands them over as `$defs`).
    const name = schema.$ref.replace(/^#\/(\$defs|components\/schemas)\//, '');
    const target = root.$defs?.[name];
    if (!target) return anyJson;
    // Recursive definitions stop at a leaf branch after a few levels.
    if (depth > 6 && target.anyOf) {
      const leaves = target.anyOf.filter((b) => !b.$ref && b.type !== 'object' && b.type !== 'array');
      if (leaves.length) return fc.oneof(...leaves.map((b) => arbitraryOf(b, root, hints, path, depth + 1)));
    }
    return fc.constant(null).chain(() => arbitraryOf(target, root, hints, path, depth + 1));
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    // `X | null` (zod's nullish): mostly X.
    const nonNull = branches.filter((b) => b.type !== 'null');
    const arbs = branches.map((b) => ({ weight: b.type === 'null' && nonNull.length ? 1 : 4, arbitrary: arbitraryOf(b, root, hints, path, depth + 1) }));
    return fc.oneof(...arbs);
  }
  if (schema.allOf?.length) return arbitraryOf(schema.allOf[0], root, hints, path, depth + 1);
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((t) => ({ weight: t === 'null' ? 1 : 4, arbitrary: arbitraryOf({ ...schema, type: t }, root, hints, path, depth + 1) })));
  }
  switch (schema.type) {
    case 'string':
      return stringArb(schema);
    case 'integer':
      return integerArb(schema);
    case 'number':
      return numberArb(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const item = schema.items ? arbitraryOf(schema.items, root, hints, [...path, '[]'], depth + 1) : anyJson;
      const minLength = schema.minItems ?? 0;
      return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS)) });
    }
    case 'object':
      return objectArb(schema, root, hints, path, depth);
    default:
      if (schema.properties) return objectArb(schema, root, hints, path, depth);
      return anyJson;
  }
}

function objectArb(schema: JsonSchema, root: JsonSchema, hints: Hints, path: string[], depth: number): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const keys = Object.keys(props);
  const record = fc.record(
    Object.fromEntries(keys.map((k) => [k, arbitraryOf(props[k], root, hints, [...path, k], depth + 1)])),
    { requiredKeys: (schema.required ?? []).filter((k) => keys.includes(k)) },
  );
  const extra = schema.additionalProperties;
  // A hint may answer undefined for a key it wants left out.
  if (!extra || keys.length) return record.map(dropUndefined);
  // A record: keys from propertyNames, values from additionalProperties.
  const names = schema.propertyNames ?? { type: 'string' };
  const keyArb = (hints([...path, '{key}'], names, (part) => arbitraryOf(part, root, hints, path, depth + 1, true)) as fc.Arbitrary<string> | undefined) ?? fc.oneof(identifier, fc.string({ maxLength: 12 }));
  const valueArb = extra === true ? anyJson : arbitraryOf(extra, root, hints, [...path, '{}'], depth + 1);
  return fc.dictionary(keyArb, valueArb, { maxKeys: MAX_ITEMS, noNullPrototype: true });
}

function dropUndefined(v: unknown): unknown {
  const o = v as Record<string, unknown>;
  if (!Object.values(o).includes(undefined)) return o;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (o[k] !== undefined) Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
  return out;
}
