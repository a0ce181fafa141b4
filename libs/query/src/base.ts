import { ApiError, errors, isApiError } from '@platform/errors';
import { Scope, type Col, type Ref } from './scope';
import type { Resource } from './resource';
import type { SortItem } from './schemas';
import type { Ctx } from './sql';

export interface SqlRunner {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;  
}

const scopes = new WeakMap<Resource, Map<string, Scope>>();

/**
 * The resource's fields as seen through a table (or CTE) alias. Built once per resource and alias (a
 * resource is frozen, and nothing writes to a Scope: a derived one copies its columns), as it was a
 * sixth of the time of compiling a list.
 */
export function baseScope(resource: Resource, alias: string): Scope {
  let byAlias = scopes.get(resource);
  if (!byAlias) scopes.set(resource, (byAlias = new Map()));
  let scope = byAlias.get(alias);
  if (!scope) {
    const cols = new Map<string, Col>();
    for (const f of resource.fields.values()) {
      cols.set(f.key, Object.freeze({ sql: `${alias}.${f.column}`, kind: f.type, notNull: f.notNull, dateFormat: f.dateFormat }));
    }
    scope = new Scope(cols);
    byAlias.set(alias, scope);
  }
  return scope;
}

/** One ORDER BY item with MongoDB's null order (nulls first ascending, last descending). */
export function orderItem(ref: Pick<Ref, 'sql' | 'notNull'>, desc: boolean): string {
  if (ref.notNull) return `${ref.sql} ${desc ? 'DESC' : 'ASC'}`;
  return `${ref.sql} ${desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`;
}

/**
 * The ORDER BY expressions of one sort key. JSON values sort by MongoDB's (BSON) type order first —
 * null/missing < numbers < strings < objects < arrays < booleans — then by jsonb order within a type.
 */
export function sortExprs(ref: Pick<Ref, 'sql' | 'notNull' | 'kind'>): Pick<Ref, 'sql' | 'notNull'>[] {
  if (ref.kind !== 'json' && ref.kind !== 'json_array') return [ref];
  const rank = `(CASE jsonb_typeof(${ref.sql}) WHEN 'number' THEN 2 WHEN 'string' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'boolean' THEN 6 ELSE 1 END)`;
  return [{ sql: rank, notNull: true }, { sql: ref.sql, notNull: false }];
}

export function compileSort(
  sort: readonly SortItem[] | null | undefined,
  scope: Scope,
  ctx: Ctx,
  prefix: string,
  idKey?: string,
): string[] {
  const items: string[] = [];
  const seen = new Set<string>();
  (sort ?? []).forEach((s, i) => {
    const ref = scope.resolve(s.key, `${prefix}.sort[${i}].key`, ctx);
    seen.add(s.key);
    for (const e of sortExprs(ref)) items.push(orderItem(e, Boolean(s.desc)));
  });
  if (idKey && !seen.has(idKey)) items.push(orderItem(scope.resolve(idKey, 'idKey', ctx), false));
  return items;
}

export interface PageWindow {
  offset: number;
  limit: number | null;
}

/** upstream: start is 1-based (missing or < 1 means 1) and applies with a limit > 0. */
export function pageWindow(page: { start?: number | null; limit?: number | null } | null | undefined, max = 0): PageWindow {
  const start = Math.max(1, page?.start ?? 1);
  let limit = page?.limit && page.limit > 0 ? page.limit : null;
  if (max > 0) limit = limit === null ? max : Math.min(limit, max);
  return { offset: limit === null ? 0 : start - 1, limit };
}

const DATA_ERRORS: Record<string, string> = {
  '2201B': 'invalid regular expression',
  '22003': 'a number is out of range',
  '22012': 'division by zero',
  '22P02': 'a value is not valid for its field\'s type',
  '22007': 'a value is not a valid date or time',
  '22008': 'a date or time is out of range',
  '22021': 'a value holds a character that cannot be stored (NUL)',
  '2200H': 'a value is out of range',
};

/** Runs one statement; Postgres data errors caused by user values (bad regex, overflow) become 400s. */
export async function execute(db: SqlRunner, text: string, values: unknown[], prefix: string): Promise<any[]> {  
  try {
    const r = await db.query(text, values);
    return r.rows;
  } catch (e) {
    if (isApiError(e)) throw e;
    const code = (e as { code?: unknown })?.code;
    // The statement timeout (57014): the query asked for more work than one request may do (a
    // regex PostgreSQL cannot finish, a filter no index serves). The caller's to narrow, not a 5xx.
    if (code === '57014') {
      throw new ApiError(400, 'ERROR_QUERY_TIMEOUT', `The query did not finish within the time limit; narrow its filter or page. (key = ${prefix})`, { key: prefix });
    }
    // A value PostgreSQL refuses (a bad regex, a number out of range, text that is no integer): a 400
    // in our words, not PostgreSQL's message.
    if (typeof code === 'string' && code.startsWith('22')) {
      throw errors.invalidParameter(prefix, DATA_ERRORS[code] ?? 'a value is not valid for its field');
    }
    throw e;
  }
}
