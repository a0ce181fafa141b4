import type { Condition } from './schemas';

/**
 * A list request's named filters next to its `query` (upstream's search-query fields: `name`, `state`,
 * `workspace_id`, ...) as `eq` conditions to AND into the scope: one per key the request set.
 */
export function eqConditions<T extends object>(input: T, keys: readonly (keyof T & string)[]): Condition[] {
  return keys.filter((k) => input[k] !== undefined && input[k] !== null).map((k) => ({ key: k, value: input[k], operator: 'eq' }));
}
