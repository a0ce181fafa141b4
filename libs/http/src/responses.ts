import { z } from 'zod';
import type { ErrorCodes, Operation } from './operation';

/**
 * Building blocks for response schemas, and the check of an answer against its operation's declared
 * response and error codes. Response objects are strict (`z.strictObject`): a field the code adds to an
 * answer without adding it to the schema fails the tests (see tools/test/answers).
 */

/** The one error envelope every failure answers. */
export const ErrorEnvelope = z
  .strictObject({
    error: z.strictObject({ code: z.string(), message: z.string(), status: z.number().int() }),
  })
  .meta({ id: 'ErrorEnvelope' });

/** `Empty`: operations with nothing to answer (delete, …) answer 200 with `{}`. */
export const Empty = z.strictObject({}).meta({ id: 'Empty', description: 'Empty: the operation answers 200 with {}' });

/** A Struct in an answer: a free-form JSON object. */
export const structOut = z.record(z.string(), z.unknown());

/** A timestamp as answered: ISO 8601 text (`''` where upstream answers an unset timestamp as empty). */
export const timestamp = z.string();

/** A list answer: `{results: [Info], total_count}` plus the operation's extra fields. */
export function listOf<T extends z.ZodType, E extends z.ZodRawShape = Record<never, never>>(item: T, extra?: E) {
  return z.strictObject({ results: z.array(item), total_count: z.number().int().min(0), ...(extra ?? ({} as E)) });
}

/**
 * A stat / analyze answer: rows whose keys are the query's group-by keys and fields (free-form),
 * `more` when rows remain past the page, `total_count` when counted.
 */
export const StatResult = z
  .strictObject({
    // an object per row; a distinct query's rows are the values themselves
    results: z.array(z.union([z.record(z.string(), z.unknown()), z.string(), z.number(), z.boolean(), z.null()])),
    more: z.boolean().optional(),
    total_count: z.number().int().min(0).optional(),
  })
  .meta({ id: 'StatResult', description: "Rows keyed by the query's group-by keys and fields (a distinct query's rows are its values)" });

/** An analyze answer: rows (group-by keys and fields, per period for a time-series analyze) and `more`. */
export const AnalyzeResult = z
  .strictObject({ results: z.array(z.record(z.string(), z.unknown())), more: z.boolean() })
  .meta({ id: 'AnalyzeResult', description: "Rows keyed by the query's group-by keys and fields; `more` when rows remain past the page" });

/** Codes every operation can give (body, validation, limits, dependencies). */
export const SHARED_ERRORS: ErrorCodes = {
  400: ['ERROR_INVALID_PARAMETER', 'ERROR_REQUIRED_PARAMETER', 'ERROR_INVALID_PARAMETER_TYPE', 'ERROR_INVALID_JSON', 'ERROR_INVALID_ARGUMENT', 'ERROR_REQUEST_ABORTED'],
  413: ['ERROR_PAYLOAD_TOO_LARGE'],
  415: ['ERROR_UNSUPPORTED_MEDIA_TYPE'],
  503: ['ERROR_SERVICE_UNAVAILABLE'],
};
/** Codes every operation that takes a token can give. */
export const AUTH_ERRORS: ErrorCodes = {
  401: ['ERROR_AUTHENTICATE_FAILURE'],
  403: ['ERROR_PERMISSION_DENIED'],
};
/** An operation that reads one record. */
export const NOT_FOUND: ErrorCodes = { 404: ['ERROR_NOT_FOUND'] };
/** An operation that takes a Query / StatisticsQuery. */
export const QUERY_ERRORS: ErrorCodes = { 400: ['ERROR_QUERY_TIMEOUT', 'ERROR_INVALID_COLUMN'] };

/** Error code lists merged by status. */
export function mergeErrors(...lists: (ErrorCodes | undefined)[]): Record<number, string[]> {
  const out: Record<number, string[]> = {};
  for (const list of lists) {
    for (const [status, codes] of Object.entries(list ?? {})) {
      const into = (out[Number(status)] ??= []);
      for (const c of codes ?? []) if (!into.includes(c)) into.push(c);
    }
  }
  return out;
}

/** Every status → codes the operation can answer. */
export function operationErrors(op: Operation<any>): Record<number, string[]> {
  return mergeErrors(SHARED_ERRORS, op.access === 'public' ? undefined : AUTH_ERRORS, op.errors);
}

/** The schema with every object field optional, at every depth: what an answer cut by `only` holds. */
export function deepPartial(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional) return deepPartial(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return deepPartial(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodArray) return z.array(deepPartial(schema.element as z.ZodType));
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    for (const [k, v] of Object.entries(schema.shape as Record<string, z.ZodType>)) shape[k] = deepPartial(v).optional();
    return z.strictObject(shape);
  }
  return schema;
}

const partials = new WeakMap<z.ZodType, z.ZodType>();

/** The request asked for some fields only (`only`, `query.only`, `query.minimal`). */
function cutByOnly(input: unknown): boolean {
  const i = input as { only?: unknown[]; query?: { only?: unknown[]; minimal?: unknown } } | undefined;
  return Boolean(i?.only?.length || i?.query?.only?.length || i?.query?.minimal);
}

/**
 * What is wrong with one answer of `op`, or undefined when it matches what the operation declares:
 * a 200 body against `op.response` (every field optional when the request asked for `only` some), an
 * error body against the envelope with a status and code the operation declares.
 */
export function answerProblem(op: Operation<any>, status: number, answer: unknown, input?: unknown): string | undefined {
  const body: unknown = JSON.parse(JSON.stringify(answer ?? null)); // what the caller reads (Dates as text)
  if (status === 200) {
    if (!op.response) return `${op.path}: no response schema declared`;
    let schema = op.response;
    if (cutByOnly(input)) {
      schema = partials.get(op.response) ?? deepPartial(op.response);
      partials.set(op.response, schema);
    }
    const r = schema.safeParse(body);
    if (r.success) return undefined;
    const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}${i.code === 'unrecognized_keys' ? ` (${i.keys.join(', ')})` : ''}`);
    return `${op.path}: the answer does not match its response schema: ${issues.join('; ')}`;
  }
  const env = ErrorEnvelope.safeParse(body);
  if (!env.success) return `${op.path}: a ${status} answer is not the error envelope`;
  if (status >= 500 && status !== 503) return undefined; // an unexpected failure (the `default` response)
  const { code } = env.data.error;
  const declared = operationErrors(op)[status];
  if (!declared) return `${op.path}: answered ${status} ${code}, a status it does not declare`;
  if (!declared.includes(code)) return `${op.path}: answered ${status} ${code}, a code it does not declare for ${status} (${declared.join(', ')})`;
  return undefined;
}

/** Told every answer an operation gives (tests install one: tools/test/answers). */
export interface AnswerObserver {
  app(service: string, operations: Operation<any>[]): void;
  /** `sent` is the body as the caller sent it (before proto3 defaults and JSON names were read). */
  answer(op: Operation<any>, status: number, body: unknown, input: unknown, sent?: unknown): void;
}
// A global slot, so the test setup installs it without loading this library (tools/test/answers).
const OBSERVER = Symbol.for('platform.answerObserver');
const slot = globalThis as Record<symbol, AnswerObserver | undefined>;
/** Installs (or removes) the observer of every answer of every app in this process. */
export function observeAnswers(o: AnswerObserver | undefined): void {
  slot[OBSERVER] = o;
}
export function answerObserver(): AnswerObserver | undefined {
  return slot[OBSERVER];
}
