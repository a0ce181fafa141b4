import { z } from 'zod';
import { setOwn, unsafeSegment } from '@platform/core';
import { zodIssuesToApiError } from '@platform/errors';

/**
 * Zod 4 schemas of the query DSL. They accept every form upstream clients send (`{k, v, o}` aliases,
 * the old `{key, desc}` / `{keys: [...]}` sort forms, `null` for absent optional parts) and normalise
 * them; semantic checks (keys, operators, value types) happen when a query is compiled against a resource.
 */

/**
 * The bounds of one query (platform-wide; docs/decisions/platform.md). With the request body's own
 * bounds (1 MiB, 32 levels) they keep the work of compiling and running one query small and known.
 */
export const QUERY_LIMITS = Object.freeze({
  /** Characters of a key, a dotted path or a name. */
  keyLength: 512,
  /** Conditions in one filter or filter_or. */
  conditions: 256,
  /** Values of one list operator (in, not_in, contain_in, regex_in, ...). */
  listValues: 10_000,
  /** Characters of one regular expression. */
  regexLength: 512,
  keyword: 1024,
  only: 256,
  sortKeys: 32,
  stages: 32,
  /** Keys, fields or select entries of one group / analyze. */
  groupItems: 64,
  /** Rows of one stat, distinct or analyze answer (`more: true` says there were more). */
  results: 10_000,
});

/**
 * A key, dotted path or name that a query names: the compiler turns it into a JSON path and the
 * answer into object keys, so no segment may be one that reaches a prototype.
 */
export const KeySchema = z
  .string()
  .min(1)
  .max(QUERY_LIMITS.keyLength)
  .superRefine((k, ctx) => {
    const seg = unsafeSegment(k);
    if (seg !== undefined) ctx.addIssue({ code: 'custom', message: `"${seg}" is not allowed in a key` });
  });

const atMost = (n: number) => (o: object) => Object.keys(o).length <= n;

/**
 * Keys upstream's query messages (spaceone.api.core.v2, query.proto) have that we do not support yet.
 * They are accepted only empty (a proto3 client sends every field, unset ones at their defaults); a
 * value is a 400 saying the key is not supported, so a query is never answered without it silently.
 */
const notSupported = (schema: z.ZodType) =>
  schema.nullish().superRefine((v, ctx) => {
    const empty = v === null || v === undefined || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0);
    if (!empty) ctx.addIssue({ code: 'custom', message: 'not supported by this platform yet', params: { notSupported: true } });
  });
/** `lookup` (ListValue) and `add_fields` (Struct) of Query, AnalyzeQuery and TimeSeriesAnalyzeQuery. */
const UNSUPPORTED = {
  lookup: notSupported(z.array(z.unknown())),
  add_fields: notSupported(z.record(z.string(), z.unknown())),
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `v` with each short key (`k`) renamed to its long one (`key`), the long one winning when both are
 * set, as a new object. Built key by key rather than copied and then `delete`d from: a delete turns
 * the object into a dictionary, which zod then reads slowly (a filter's conditions are on every list
 * request's path: issue #22). `__proto__` stays an own key, as in the body, so the strict schema still
 * refuses it.
 */
function alias(v: unknown, pairs: readonly (readonly [string, string])[]): unknown {
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) {
    if (pairs.some((p) => p[1] === k)) continue;
    if (k === '__proto__') setOwn(out, k, v[k]);
    else out[k] = v[k];
  }
  for (const [long, short] of pairs) {
    if (out[long] === undefined && Object.hasOwn(v, short) && v[short] !== undefined) out[long] = v[short];
  }
  return out;
}

/** The short names a query object also takes, for its document (`x-aliases`: short -> long). */
const aliasesOf = (pairs: readonly (readonly [string, string])[]) => Object.fromEntries(pairs.map(([long, short]) => [short, long]));

/** An object that also takes short names (`k` for `key`): read as the long ones, and declared to its document. */
function aliased<T extends z.ZodType>(pairs: readonly (readonly [string, string])[], inner: T) {
  return z.preprocess((v) => alias(v, pairs), inner.meta({ 'x-aliases': aliasesOf(pairs) }));
}

const CONDITION_ALIASES = [
  ['key', 'k'],
  ['value', 'v'],
  ['operator', 'o'],
] as const;

export const ConditionSchema = z.preprocess(
  (v) => {
    const o = alias(v, CONDITION_ALIASES);
    if (isObj(o) && o.value === undefined) o.value = null;
    return o;
  },
  z.strictObject({
    key: KeySchema,
    value: z.unknown().superRefine((v, ctx) => {
      if (Array.isArray(v) && v.length > QUERY_LIMITS.listValues) ctx.addIssue({ code: 'custom', message: `at most ${QUERY_LIMITS.listValues} values` });
      if (typeof v === 'string' && v.length > 65_536) ctx.addIssue({ code: 'custom', message: 'at most 65536 characters' });
    }),
    operator: z.string().min(1).max(64),
  }).meta({ 'x-aliases': aliasesOf(CONDITION_ALIASES) }),
).meta({ id: 'Condition' });
export type Condition = { key: string; value: unknown; operator: string };

const SortItemSchema = aliased([['key', 'k']], z.strictObject({ key: KeySchema, desc: z.boolean().nullish() }));

/**
 * `[{key, desc}]`, or core v1's Sort message `{key, desc, keys: [{key, desc}]}` (or a part of it),
 * normalised to a list. A proto3 client sends the whole message: `keys: []` with a `key`, or `key: ""`
 * with `keys`; the empty one is not set. `keys` wins when both are set (python-core reads it first).
 */
/** The forms a caller may send for `sort`, for its document (the schema below reads them all as a list). */
const SORT_FORMS = z.toJSONSchema(
  z.union([
    z.array(SortItemSchema).max(QUERY_LIMITS.sortKeys),
    z.strictObject({ key: z.string().max(QUERY_LIMITS.keyLength).nullish(), k: z.string().max(QUERY_LIMITS.keyLength).nullish(), desc: z.boolean().nullish(), keys: z.array(SortItemSchema).max(QUERY_LIMITS.sortKeys).nullish() }),
  ]),
  { io: 'input', unrepresentable: 'any' },
);
delete (SORT_FORMS as Record<string, unknown>).$schema;

export const SortSchema = z.preprocess((v) => {
  if (Array.isArray(v)) return v;
  if (isObj(v)) {
    const { keys, ...one } = v;
    if (Array.isArray(keys) && keys.length > 0) return keys;
    const key = one.key ?? one.k;
    if (key !== undefined && key !== null && key !== '') return [one];
    const unset = keys === undefined || keys === null || Array.isArray(keys);
    if (unset && Object.keys(one).every((k) => k === 'key' || k === 'k' || k === 'desc')) return []; // no key: no sort
  }
  return v;
}, z.array(SortItemSchema).max(QUERY_LIMITS.sortKeys)).meta({ 'x-input': SORT_FORMS });
export type SortItem = { key: string; desc?: boolean | null };

export const PageSchema = z.strictObject({
  start: z.number().int().nullish(),
  limit: z.number().int().nullish(),
}).meta({ id: 'Page' });
export type Page = z.infer<typeof PageSchema>;

const filterList = z.array(ConditionSchema).max(QUERY_LIMITS.conditions).nullish();

export const UnwindSchema = z.strictObject({ path: KeySchema, filter: filterList });
export type Unwind = z.infer<typeof UnwindSchema>;

/** Query (upstream's spaceone.api.core.v2.Query): an unknown key is a 400 naming it, never dropped. */
export const QuerySchema = z.strictObject({
  filter: filterList,
  filter_or: filterList,
  sort: SortSchema.nullish(),
  page: PageSchema.nullish(),
  minimal: z.boolean().nullish(),
  count_only: z.boolean().nullish(),
  only: z.array(KeySchema).max(QUERY_LIMITS.only).nullish(),
  keyword: z.string().max(QUERY_LIMITS.keyword).nullish(),
  unwind: UnwindSchema.nullish(),
  ...UNSUPPORTED,
}).meta({ id: 'Query' });
export type Query = z.infer<typeof QuerySchema>;

// ---------------------------------------------------------------- StatisticsQuery

const KeyNameSchema = aliased([['key', 'k'], ['name', 'n']], z.strictObject({ key: KeySchema, name: KeySchema }));

export const GroupKeySchema = aliased([['key', 'k'], ['name', 'n']], z.strictObject({ key: KeySchema, name: KeySchema, date_format: z.string().min(1).max(64).nullish() }));

export const GroupFieldSchema = aliased([['key', 'k'], ['name', 'n'], ['operator', 'o']], z.strictObject({
  key: KeySchema.nullish(),
  name: KeySchema,
  operator: z.string().min(1).max(64),
  fields: z.array(KeyNameSchema).max(QUERY_LIMITS.groupItems).nullish(),
  conditions: z.array(ConditionSchema).max(QUERY_LIMITS.conditions).nullish(),
}));

export type ProjectOperand = string | number | { operator: string; fields: ProjectOperand[] };
const ProjectOperandSchema: z.ZodType<ProjectOperand> = z.lazy(() =>
  z.union([
    KeySchema,
    z.number(),
    aliased([['operator', 'o'], ['fields', 'f']], z.strictObject({ operator: z.string().min(1).max(64), fields: z.array(ProjectOperandSchema).max(QUERY_LIMITS.groupItems) })),
  ]),
  // Named: it is recursive, so OpenAPI documents declare it once, as components.schemas.ProjectOperand.
).meta({ id: 'ProjectOperand' });

export const ProjectFieldSchema = aliased([['key', 'k'], ['name', 'n'], ['operator', 'o'], ['fields', 'f']], z.strictObject({
  key: KeySchema.nullish(),
  name: KeySchema,
  operator: z.string().min(1).max(64).nullish(),
  fields: z.array(ProjectOperandSchema).max(QUERY_LIMITS.groupItems).nullish(),
}));

export const StageSchema = z.strictObject({
  group: z
    .strictObject({ keys: z.array(GroupKeySchema).max(QUERY_LIMITS.groupItems).nullish(), fields: z.array(GroupFieldSchema).max(QUERY_LIMITS.groupItems).nullish() })
    .optional(),
  unwind: UnwindSchema.optional(),
  count: z.strictObject({ name: KeySchema }).optional(),
  sort: SortSchema.optional(),
  limit: z.number().int().optional(),
  skip: z.number().int().optional(),
  match: z.strictObject({ filter: filterList, filter_or: filterList }).optional(),
  project: z
    .strictObject({
      fields: z.array(ProjectFieldSchema).max(QUERY_LIMITS.groupItems),
      exclude_keys: z.boolean().nullish(),
      only_keys: z.boolean().nullish(),
    })
    .optional(),
});
export type Stage = z.infer<typeof StageSchema>;

export const StatisticsQuerySchema = z.strictObject({
  filter: filterList,
  filter_or: filterList,
  keyword: z.string().max(QUERY_LIMITS.keyword).nullish(),
  aggregate: z.array(StageSchema).max(QUERY_LIMITS.stages).nullish(),
  distinct: KeySchema.nullish(),
  page: PageSchema.nullish(),
}).meta({ id: 'StatisticsQuery' });
export type StatisticsQuery = z.infer<typeof StatisticsQuerySchema>;

// ---------------------------------------------------------------- AnalyzeQuery

export const AnalyzeFieldSchema = aliased([['key', 'k'], ['operator', 'o']], z.strictObject({
  key: KeySchema.nullish(),
  operator: z.string().min(1).max(64),
  fields: z.record(KeySchema, KeySchema).nullish(),
}));

export const AnalyzeQuerySchema = z.strictObject({
  group_by: z.array(z.union([KeySchema, KeyNameSchema])).max(QUERY_LIMITS.groupItems).nullish(),
  field_group: z.array(KeySchema).max(QUERY_LIMITS.groupItems).nullish(),
  filter: filterList,
  filter_or: filterList,
  keyword: z.string().max(QUERY_LIMITS.keyword).nullish(),
  fields: z.record(KeySchema, AnalyzeFieldSchema).refine(atMost(QUERY_LIMITS.groupItems), `at most ${QUERY_LIMITS.groupItems} fields`),
  select: z
    .record(
      KeySchema,
      z.union([
        KeySchema,
        z.strictObject({
          operator: z.string().min(1).max(64),
          key: KeySchema.nullish(),
          fields: z.array(ProjectOperandSchema).max(QUERY_LIMITS.groupItems).nullish(),
        }),
      ]),
    )
    .refine(atMost(QUERY_LIMITS.groupItems), `at most ${QUERY_LIMITS.groupItems} entries`)
    .nullish(),
  sort: SortSchema.nullish(),
  page: PageSchema.nullish(),
  /** Since upstream 2.0.199: each element of an array field becomes a row before grouping. */
  unwind: UnwindSchema.nullish(),
  ...UNSUPPORTED,
}).meta({ id: 'AnalyzeQuery' });
export type AnalyzeQuery = z.infer<typeof AnalyzeQuerySchema>;

export const GranularitySchema = z.enum(['DAILY', 'MONTHLY', 'YEARLY']);
export type Granularity = z.infer<typeof GranularitySchema>;

export const TimeSeriesAnalyzeQuerySchema = AnalyzeQuerySchema.extend({
  granularity: GranularitySchema.nullish(),
  start: z.string().min(1).max(64).nullish(),
  end: z.string().min(1).max(64).nullish(),
  date_field: KeySchema.nullish(),
}).meta({ id: 'TimeSeriesAnalyzeQuery' });
export type TimeSeriesAnalyzeQuery = z.infer<typeof TimeSeriesAnalyzeQuerySchema>;

// ---------------------------------------------------------------- parsing helpers

/**
 * Validates `input` against `schema`; failures are 400s naming the key (`query.filter[0].key`), an
 * unknown key before anything else (libs/errors, zodIssuesToApiError).
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix = 'query'): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw zodIssuesToApiError(r.error, input, prefix);
}

export const parseQuery = (input: unknown, prefix = 'query'): Query => parseWith(QuerySchema, input ?? {}, prefix);
export const parseStatisticsQuery = (input: unknown, prefix = 'query'): StatisticsQuery =>
  parseWith(StatisticsQuerySchema, input, prefix);
export const parseAnalyzeQuery = (input: unknown, prefix = 'query'): AnalyzeQuery =>
  parseWith(AnalyzeQuerySchema, input, prefix);
export const parseTimeSeriesAnalyzeQuery = (input: unknown, prefix = 'query'): TimeSeriesAnalyzeQuery =>
  parseWith(TimeSeriesAnalyzeQuerySchema, input, prefix);

