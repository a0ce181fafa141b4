import { errors } from '@platform/errors';
import { baseScope, compileSort, execute, pageWindow, type SqlRunner } from './base';
import { compileCondition, compileWhere } from './filter';
import { arrayOrNull, Scope, type Col } from './scope';
import { splitKey, type Resource } from './resource';
import type { Condition, Query } from './schemas';
import { Ctx, type CompiledSql } from './sql';

export interface CompileOptions {
  /** Name of the query in the request, for error keys (default `query`). */
  prefix?: string;
  /** Clock for timediff values (tests). */
  now?: Date;
  /** Rows of a stat, distinct or analyze answer at most (default QUERY_LIMITS.results); past it, `more: true`. */
  maxResults?: number;
}

export interface CompiledList extends CompiledSql {
  countOnly: boolean;
  unwind?: { column: string; path: string[] };
}

const T = 't';

/** The FROM clause and scope of a query, with `unwind` applied (each array element becomes a row). */
function source(resource: Resource, query: Query | undefined, ctx: Ctx, prefix: string) {
  const scope = baseScope(resource, T);
  let from = `${resource.table} AS ${T}`;
  let unwindScope: Scope | undefined;
  let unwind: CompiledList['unwind'];
  if (query?.unwind) {
    const key = `${prefix}.unwind.path`;
    const s = splitKey(resource.fields, query.unwind.path);
    const ref = scope.resolve(query.unwind.path, key, ctx);
    if (!s || ref.each) throw errors.invalidParameter(key, 'unwind needs an array field');
    let kind: Col['kind'];
    if (ref.kind === 'string_array') {
      from += ` CROSS JOIN LATERAL unnest(${ref.sql}) AS u(v)`;
      kind = 'string';
    } else if (ref.kind === 'json' || ref.kind === 'json_array') {
      from += ` CROSS JOIN LATERAL jsonb_array_elements(${arrayOrNull(ref.sql)}) AS u(v)`;
      kind = 'json';
    } else {
      throw errors.invalidParameter(key, 'unwind needs an array field');
    }
    const cols = new Map(scope.cols);
    cols.set(query.unwind.path, { sql: 'u.v', kind });
    unwindScope = new Scope(cols);
    unwind = { column: resource.spec.fields[s.name].column, path: s.path };
  }
  return { scope: unwindScope ?? scope, from, unwind };
}

export interface CompiledListRows extends CompiledSql {
  unwind?: { column: string; path: string[] };
}

/** The WHERE of a list query over its FROM (the parts compileList and compileListRows share). */
function compileFiltered(resource: Resource, query: Query | undefined, scopeConds: readonly Condition[], opts: CompileOptions) {
  const prefix = opts.prefix ?? 'query';
  const now = opts.now ?? new Date();
  const ctx = new Ctx();
  const q = query ?? {};
  const { scope, from, unwind } = source(resource, query, ctx, prefix);
  let where = compileWhere(q, scopeConds, scope, resource.keywordKeys, ctx, prefix, now);
  (q.unwind?.filter ?? []).forEach((c, i) => {
    where += ` AND ${compileCondition(c, scope, { ctx, errKey: `${prefix}.unwind.filter[${i}]`, now })}`;
  });
  return { q, ctx, prefix, scope, from, where, unwind };
}

/** `SELECT t.* ... ORDER BY ... LIMIT/OFFSET` of the filtered source: the rows of the page. */
function pageSql(resource: Resource, f: ReturnType<typeof compileFiltered>, extra: string): string {
  const { q, ctx, prefix, scope, from, where, unwind } = f;
  const order = compileSort(q.sort, scope, ctx, prefix, resource.idKey);
  const win = pageWindow(q.page, resource.maxLimit);
  let page = `SELECT ${T}.*${unwind ? ', u.v AS __qunwind' : ''}${extra} FROM ${from} WHERE ${where} ORDER BY ${order.join(', ')}`;
  if (win.limit !== null) page += ` LIMIT ${ctx.add(win.limit, 'int8')}`;
  if (win.offset > 0) page += ` OFFSET ${ctx.add(win.offset, 'int8')}`;
  return page;
}

export function compileList(
  resource: Resource,
  query: Query | undefined,
  scopeConds: readonly Condition[],
  opts: CompileOptions = {},
): CompiledList {
  const f = compileFiltered(resource, query, scopeConds, opts);
  const count = `SELECT count(*)::float8 AS __qtotal FROM ${f.from} WHERE ${f.where}`;
  if (f.q.count_only) return { text: count, values: f.ctx.values, countOnly: true, unwind: f.unwind };
  const page = pageSql(resource, f, ', 1 AS __qrow');
  const text = `SELECT c.__qtotal, p.* FROM (${count}) AS c LEFT JOIN LATERAL (${page}) AS p ON TRUE`;
  return { text, values: f.ctx.values, countOnly: false, unwind: f.unwind };
}

/**
 * The rows of a list query's page only, in order, without the total count (for callers that stream
 * every row, such as an export): `SELECT t.*` (plus `__qunwind`, the array element, when the query
 * unwinds) with the query's filter, sort and page. `count_only` is ignored. Column names are the
 * table's; wrap the statement (`SELECT ... FROM (text) AS x`) to project.
 */
export function compileListRows(
  resource: Resource,
  query: Query | undefined,
  scopeConds: readonly Condition[],
  opts: CompileOptions = {},
): CompiledListRows {
  const f = compileFiltered(resource, query, scopeConds, opts);
  return { text: pageSql(resource, f, ''), values: f.ctx.values, unwind: f.unwind };
}

function setIn(obj: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const base = obj && typeof obj === 'object' && !Array.isArray(obj) ? { ...(obj as Record<string, unknown>) } : {};
  base[path[0]] = setIn(base[path[0]], path.slice(1), value);
  return base;
}

/** The columns compileList adds to the table's: the total, the page-row mark, the unwound element. */
const MARKERS = new Set(['__qtotal', '__qrow', '__qunwind']);

/**
 * list: the table's rows as `pg` returns them, the page of them the query asks for, and the total
 * count of matches (paging ignored). `count_only` answers no rows and the real total.
 */
export async function runList(
  db: SqlRunner,
  resource: Resource,
  query: Query | undefined,
  scope: Condition[],
  opts: CompileOptions = {},
): Promise<{ rows: any[]; total_count: number }> {  
  const c = compileList(resource, query, scope, opts);
  const rows = await execute(db, c.text, c.values, opts.prefix ?? 'query');
  const total = Number(rows[0]?.__qtotal ?? 0);
  if (c.countOnly) return { rows: [], total_count: total };
  const out = [];
  // Each row is copied without the marker columns rather than `delete`d from: pg builds its rows by
  // cloning one object, and a delete on such a row turns it into a dictionary (slower to read and to
  // serialise). The copies are built in the same key order, so they share one hidden class.
  const keys = rows.length > 0 ? Object.keys(rows[0]).filter((k) => !MARKERS.has(k)) : [];
  for (const r of rows) {
    if (r.__qrow === null || r.__qrow === undefined) continue;
    const o: Record<string, unknown> = {};
    for (const k of keys) o[k] = r[k];
    if (c.unwind) {
      const { column, path } = c.unwind;
      o[column] = setIn(o[column], path, [r.__qunwind]);
    }
    out.push(o);
  }
  return { rows: out, total_count: total };
}

/** The rows of a list query's page, without the count (see compileListRows); `__qunwind` left as is. */
export async function runListRows(db: SqlRunner, resource: Resource, query: Query | undefined, scope: Condition[], opts: CompileOptions = {}): Promise<any[]> {
  const c = compileListRows(resource, query, scope, opts);
  return execute(db, c.text, c.values, opts.prefix ?? 'query');
}
