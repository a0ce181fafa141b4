import { z } from 'zod';
import { errors } from '@platform/errors';

/**
 * Zod 4 schemas of the query DSL. They accept every form upstream clients send (`{k, v, o}` aliases,
 * the old `{key, desc}` / `{keys: [...]}` sort forms, `null` for absent optional parts) and normalise
 * them; semantic checks (keys, operators, value types) happen when a query is compiled against a resource.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function alias(v: unknown, pairs: [string, string][]): unknown {
  if (!isObj(v)) return v;
  const out: Obj = { ...v };
  for (const [long, short] of pairs) {
    if (out[long] === undefined && out[short] !== undefined) out[long] = out[short];
    delete out[short];
  }
  return out;
}

export const ConditionSchema = z.preprocess(
  (v) => {
    const o = alias(v, [
      ['key', 'k'],
      ['value', 'v'],
      ['operator', 'o'],
    ]);
    if (isObj(o) && o.value === undefined) return { ...o, value: null };
    return o;
  },
  z.object({
    key: z.string().min(1),
    value: z.unknown(),
    operator: z.string().min(1),
  }),
);
export type Condition = { key: string; value: unknown; operator: string };

const SortItemSchema = z.preprocess(
  (v) => alias(v, [['key', 'k']]),
  z.object({ key: z.string().min(1), desc: z.boolean().nullish() }),
);

/** `[{key, desc}]`, or the old `{key, desc}` / `{keys: [{key, desc}]}` forms, normalised to a list. */
export const SortSchema = z.preprocess((v) => {
  if (Array.isArray(v)) return v;
  if (isObj(v)) {
    if (Array.isArray(v.keys)) return v.keys;
    if (v.key !== undefined || v.k !== undefined) return [v];
    if (Object.keys(v).length === 0) return [];
  }
  return v;
}, z.array(SortItemSchema));
export type SortItem = { key: string; desc?: boolean | null };

export const PageSchema = z.object({
  start: z.number().int().nullish(),
  limit: z.number().int().nullish(),
});
export type Page = z.infer<typeof PageSchema>;

const filterList = z.array(ConditionSchema).nullish();

export const UnwindSchema = z.object({ path: z.string().min(1), filter: filterList });
export type Unwind = z.infer<typeof UnwindSchema>;

export const QuerySchema = z.object({
  filter: filterList,
  filter_or: filterList,
  sort: SortSchema.nullish(),
  page: PageSchema.nullish(),
  minimal: z.boolean().nullish(),
  count_only: z.boolean().nullish(),
  only: z.array(z.string()).nullish(),
  keyword: z.string().nullish(),
  unwind: UnwindSchema.nullish(),
});
export type Query = z.infer<typeof QuerySchema>;

// ---------------------------------------------------------------- StatisticsQuery

const KeyNameSchema = z.preprocess(
  (v) =>
    alias(v, [
      ['key', 'k'],
      ['name', 'n'],
    ]),
  z.object({ key: z.string().min(1), name: z.string().min(1) }),
);

export const GroupKeySchema = z.preprocess(
  (v) =>
    alias(v, [
      ['key', 'k'],
      ['name', 'n'],
    ]),
  z.object({ key: z.string().min(1), name: z.string().min(1), date_format: z.string().min(1).nullish() }),
);

export const GroupFieldSchema = z.preprocess(
  (v) =>
    alias(v, [
      ['key', 'k'],
      ['name', 'n'],
      ['operator', 'o'],
    ]),
  z.object({
    key: z.string().min(1).nullish(),
    name: z.string().min(1),
    operator: z.string().min(1),
    fields: z.array(KeyNameSchema).nullish(),
    conditions: z.array(ConditionSchema).nullish(),
  }),
);

export type ProjectOperand = string | number | { operator: string; fields: ProjectOperand[] };
const ProjectOperandSchema: z.ZodType<ProjectOperand> = z.lazy(() =>
  z.union([
    z.string().min(1),
    z.number(),
    z.preprocess(
      (v) =>
        alias(v, [
          ['operator', 'o'],
          ['fields', 'f'],
        ]),
      z.object({ operator: z.string().min(1), fields: z.array(ProjectOperandSchema) }),
    ),
  ]),
);

export const ProjectFieldSchema = z.preprocess(
  (v) =>
    alias(v, [
      ['key', 'k'],
      ['name', 'n'],
      ['operator', 'o'],
      ['fields', 'f'],
    ]),
  z.object({
    key: z.string().min(1).nullish(),
    name: z.string().min(1),
    operator: z.string().min(1).nullish(),
    fields: z.array(ProjectOperandSchema).nullish(),
  }),
);

export const StageSchema = z.object({
  group: z
    .object({ keys: z.array(GroupKeySchema).nullish(), fields: z.array(GroupFieldSchema).nullish() })
    .optional(),
  unwind: UnwindSchema.optional(),
  count: z.object({ name: z.string().min(1) }).optional(),
  sort: SortSchema.optional(),
  limit: z.number().int().optional(),
  skip: z.number().int().optional(),
  match: z.object({ filter: filterList, filter_or: filterList }).optional(),
  project: z
    .object({
      fields: z.array(ProjectFieldSchema),
      exclude_keys: z.boolean().nullish(),
      only_keys: z.boolean().nullish(),
    })
    .optional(),
});
export type Stage = z.infer<typeof StageSchema>;

export const StatisticsQuerySchema = z.object({
  filter: filterList,
  filter_or: filterList,
  keyword: z.string().nullish(),
  aggregate: z.array(StageSchema).nullish(),
  distinct: z.string().min(1).nullish(),
  page: PageSchema.nullish(),
});
export type StatisticsQuery = z.infer<typeof StatisticsQuerySchema>;

// ---------------------------------------------------------------- AnalyzeQuery

export const AnalyzeFieldSchema = z.preprocess(
  (v) =>
    alias(v, [
      ['key', 'k'],
      ['operator', 'o'],
    ]),
  z.object({
    key: z.string().min(1).nullish(),
    operator: z.string().min(1),
    fields: z.record(z.string(), z.string()).nullish(),
  }),
);

export const AnalyzeQuerySchema = z.object({
  group_by: z.array(z.union([z.string().min(1), KeyNameSchema])).nullish(),
  field_group: z.array(z.string().min(1)).nullish(),
  filter: filterList,
  filter_or: filterList,
  keyword: z.string().nullish(),
  fields: z.record(z.string(), AnalyzeFieldSchema),
  select: z
    .record(
      z.string(),
      z.union([
        z.string().min(1),
        z.object({
          operator: z.string().min(1),
          key: z.string().min(1).nullish(),
          fields: z.array(ProjectOperandSchema).nullish(),
        }),
      ]),
    )
    .nullish(),
  sort: SortSchema.nullish(),
  page: PageSchema.nullish(),
});
export type AnalyzeQuery = z.infer<typeof AnalyzeQuerySchema>;

export const GranularitySchema = z.enum(['DAILY', 'MONTHLY', 'YEARLY']);
export type Granularity = z.infer<typeof GranularitySchema>;

export const TimeSeriesAnalyzeQuerySchema = AnalyzeQuerySchema.extend({
  granularity: GranularitySchema.nullish(),
  start: z.string().min(1).nullish(),
  end: z.string().min(1).nullish(),
  date_field: z.string().min(1).nullish(),
});
export type TimeSeriesAnalyzeQuery = z.infer<typeof TimeSeriesAnalyzeQuerySchema>;

// ---------------------------------------------------------------- parsing helpers

function keyOf(path: PropertyKey[]): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)),
    '',
  );
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** Validates `input` against `schema`; failures are 400s naming the key (`query.filter[0].key`). */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix = 'query'): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = [prefix, ...(issue?.path ?? [])];
  const key = keyOf(path);
  if (issue?.code === 'invalid_type' && valueAt({ [prefix]: input }, path) === undefined) {
    throw errors.requiredParameter(key);
  }
  throw errors.invalidParameter(key, issue?.message ?? 'invalid');
}

export const parseQuery = (input: unknown, prefix = 'query'): Query => parseWith(QuerySchema, input ?? {}, prefix);
export const parseStatisticsQuery = (input: unknown, prefix = 'query'): StatisticsQuery =>
  parseWith(StatisticsQuerySchema, input, prefix);
export const parseAnalyzeQuery = (input: unknown, prefix = 'query'): AnalyzeQuery =>
  parseWith(AnalyzeQuerySchema, input, prefix);
export const parseTimeSeriesAnalyzeQuery = (input: unknown, prefix = 'query'): TimeSeriesAnalyzeQuery =>
  parseWith(TimeSeriesAnalyzeQuerySchema, input, prefix);

