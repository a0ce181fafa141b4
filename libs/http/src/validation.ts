import { z } from 'zod';
import { ApiError, errors } from '@platform/errors';
import { withoutProto3Defaults } from './proto3';

function keyOf(path: PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), '');
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v: any = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[p as any];
  }
  return v;
}

/** The first zod issue as upstream's error: a missing key is ERROR_REQUIRED_PARAMETER, anything else ERROR_INVALID_PARAMETER. */
export function zodToApiError(error: z.ZodError, input?: unknown): ApiError {
  const issue = error.issues[0];
  if (!issue) return errors.invalidArgument('Invalid request.');
  if (issue.code === 'unrecognized_keys') {
    const key = keyOf([...issue.path, issue.keys[0]]);
    return errors.invalidParameter(key, 'unknown field');
  }
  const key = keyOf(issue.path) || 'body';
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return errors.requiredParameter(key);
  }
  if (issue.code === 'custom' && (issue.params as { apiError?: ApiError } | undefined)?.apiError) {
    return (issue.params as { apiError: ApiError }).apiError;
  }
  return errors.invalidParameter(key, issue.message);
}

export function parseInput<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw zodToApiError(r.error, body);
  return r.data;
}

/**
 * An operation's request as its handler gets it: optional fields at their proto3 defaults read as
 * absent (see proto3.ts), then the whole body validated by the operation's schema.
 */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  return parseInput(schema, withoutProto3Defaults(schema, body));
}
