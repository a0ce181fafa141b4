import type { z } from 'zod';
import { ApiError, errors } from './errors';

type Issue = z.core.$ZodIssue;

function keyOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), '');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/**
 * The issues with paths from the root. A union's own issue ("Invalid input" on the whole value) is
 * replaced by the issues of the one form the value has (the object form when an object was sent), so
 * a key inside it is named.
 */
function flatten(issues: readonly Issue[], at: readonly PropertyKey[] = [], depth = 0): Issue[] {
  const out: Issue[] = [];
  for (const issue of issues) {
    const path = [...at, ...issue.path];
    if (issue.code === 'invalid_union' && depth < 16) {
      const fits = issue.errors.filter((branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0));
      if (fits.length === 1) {
        out.push(...flatten(fits[0], path, depth + 1));
        continue;
      }
    }
    out.push({ ...issue, path } as Issue);
  }
  return out;
}

/** Upstream's enum zero values: `NONE`, `<PREFIX>_NONE` (SCOPE_NONE, GRANULARITY_NONE), `NONE_<SUFFIX>` (NONE_FILE_FORMAT). */
export const ZERO_ENUM = /^(?:[A-Z][A-Z0-9]*_)*NONE(?:_[A-Z][A-Z0-9]*)*$/;

/**
 * Whether a required field that failed is unset as proto3 sees it: absent, `null`, `""`, or an enum at
 * its zero value (a proto3 client cannot tell those from leaving the field out). Upstream answers
 * ERROR_REQUIRED_PARAMETER for each, whatever zod's issue (an enum left out is `invalid_value`).
 */
function isUnset(issue: Issue, value: unknown): boolean {
  // absent or null: the issue says a value is missing (a type, an enum's value, one of a union's forms),
  // not a rule about a value the caller sent under another spelling (a query's `k` for `key`)
  if (value === undefined || value === null) return issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_union';
  if (value === '') return issue.code !== 'unrecognized_keys';
  return issue.code === 'invalid_value' && typeof value === 'string' && ZERO_ENUM.test(value);
}

/**
 * A validation failure as upstream's error, for the key it names (paths under `prefix` when given, e.g.
 * `query.filter[0].key`). An unknown key is named first, wherever it is (a misspelt key also leaves its
 * right spelling missing): ERROR_INVALID_PARAMETER `unknown field`. Otherwise the first issue: an unset
 * field (isUnset) is ERROR_REQUIRED_PARAMETER, anything else ERROR_INVALID_PARAMETER with the issue's
 * message.
 */
export function zodIssuesToApiError(error: z.ZodError, input: unknown, prefix?: string): ApiError {
  const issues = flatten(error.issues);
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0];
  if (!issue) return errors.invalidArgument('Invalid request.');
  const root: PropertyKey[] = prefix === undefined ? [] : [prefix];
  if (issue.code === 'unrecognized_keys') return errors.invalidParameter(keyOf([...root, ...issue.path, issue.keys[0]]), 'unknown field');
  const key = keyOf([...root, ...issue.path]) || 'body';
  if (issue.path.length > 0 && isUnset(issue, valueAt(input, issue.path))) return errors.requiredParameter(key);
  if (issue.code === 'custom' && (issue.params as { apiError?: ApiError } | undefined)?.apiError) {
    return (issue.params as { apiError: ApiError }).apiError;
  }
  return errors.invalidParameter(key, issue.message);
}
