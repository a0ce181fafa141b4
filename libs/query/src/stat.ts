import { errors } from '@platform/errors';
import { baseScope, execute, pageWindow, type SqlRunner } from './base';
import { compileWhere } from './filter';
import type { CompileOptions } from './list';
import { compilePipeline, finalOrder, finalSelect } from './pipeline';
import type { Resource } from './resource';
import { QUERY_LIMITS, type Condition, type StatisticsQuery } from './schemas';
import { Ctx, type CompiledSql } from './sql';
import { NUMERIC, type StageIR } from './stage';

/** stat (upstream's StatisticsQuery): `aggregate` stages through the pipeline, or `distinct` values. */

function stagesOf(aggregate: NonNullable<StatisticsQuery['aggregate']>, prefix: string): StageIR[] {
  return aggregate.map((s, i): StageIR => {
    const base = `${prefix}.aggregate[${i}]`;
    const present = (['group', 'unwind', 'count', 'sort', 'limit', 'skip', 'match', 'project'] as const).filter(
      (k) => s[k] !== undefined,
    );
    if (present.length !== 1) {
      throw errors.invalidParameter(base, 'each stage has exactly one of group, unwind, count, sort, limit, skip, match, project');
    }
    const errKey = `${base}.${present[0]}`;
    if (s.group) {
      return {
        type: 'group',
        errKey,
        keys: (s.group.keys ?? []).map((k, j) => ({ key: k.key, name: k.name, dateFormat: k.date_format, errKey: `${errKey}.keys[${j}]` })),
        fields: (s.group.fields ?? []).map((f, j) => ({ ...f, errKey: `${errKey}.fields[${j}]` })),
      };
    }
    if (s.unwind) return { type: 'unwind', path: s.unwind.path, filter: s.unwind.filter, errKey };
    if (s.count) return { type: 'count', name: s.count.name, errKey };
    if (s.sort) return { type: 'sort', sort: s.sort, errKey };
    if (s.limit !== undefined) return { type: 'limit', n: s.limit, errKey };
    if (s.skip !== undefined) return { type: 'skip', n: s.skip, errKey };
    if (s.match) return { type: 'match', filter: s.match.filter, filter_or: s.match.filter_or, errKey };
    const p = s.project as NonNullable<typeof s.project>;
    return {
      type: 'project',
      errKey,
      excludeKeys: Boolean(p.exclude_keys),
      onlyKeys: Boolean(p.only_keys),
      fields: p.fields.map((f, j) => ({ ...f, errKey: `${errKey}.fields[${j}]` })),
    };
  });
}

export interface CompiledStat extends CompiledSql {
  kind: 'aggregate' | 'distinct';
  paged: boolean;
  /** The most rows the answer holds; `clamped`: page.limit asked for more. */
  cap: number;
  clamped: boolean;
  offset?: number;
  toObject?: (row: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The final SELECT of a stat or distinct, never more than `cap` rows: without `page.limit` it reads
 * `cap + 1` (one more tells the answer was cut); a `page.limit` past the cap is lowered to it.
 */
function pagedSelect(ctes: string[], from: string, list: string, order: string, page: StatisticsQuery['page'], ctx: Ctx, cap: number) {
  const asked = pageWindow(page);
  const win = pageWindow(page, cap);
  const withs = `WITH ${ctes.join(', ')} `;
  if (asked.limit === null) return { text: `${withs}SELECT ${list} FROM ${from}${order} LIMIT ${ctx.add(cap + 1, 'int8')}`, paged: false, clamped: false };
  let p = `SELECT ${list}, 1 AS __qrow FROM ${from}${order} LIMIT ${ctx.add(win.limit, 'int8')}`;
  if (win.offset > 0) p += ` OFFSET ${ctx.add(win.offset, 'int8')}`;
  return {
    text: `${withs}SELECT c.__qtotal, p.* FROM (SELECT count(*)::float8 AS __qtotal FROM ${from}) AS c LEFT JOIN LATERAL (${p}) AS p ON TRUE`,
    paged: true,
    clamped: (asked.limit as number) > cap,
    offset: win.offset,
  };
}

export function compileStat(
  resource: Resource,
  query: StatisticsQuery,
  scopeConds: readonly Condition[],
  opts: CompileOptions = {},
): CompiledStat {
  const prefix = opts.prefix ?? 'query';
  const now = opts.now ?? new Date();
  const cap = opts.maxResults ?? QUERY_LIMITS.results;
  const ctx = new Ctx();
  if (!query || (!query.aggregate?.length && !query.distinct)) throw errors.requiredParameter(`${prefix}.aggregate`);
  const where = compileWhere(query, scopeConds, baseScope(resource, 't'), resource.keywordKeys, ctx, prefix, now);
  if (query.aggregate?.length) {
    const { ctes, state } = compilePipeline(resource, where, stagesOf(query.aggregate, prefix), ctx, now);
    const fin = finalSelect(state);
    const sel = pagedSelect(ctes, state.alias, fin.list, finalOrder(state), query.page, ctx, cap);
    return { text: sel.text, values: ctx.values, kind: 'aggregate', paged: sel.paged, cap, clamped: sel.clamped, offset: sel.offset, toObject: fin.toObject };
  }
  // distinct: the sorted distinct values; array fields contribute their elements (as MongoDB's distinct).
  const ctes = [`s0 AS (SELECT * FROM ${resource.table} AS t WHERE ${where})`];
  const ref = baseScope(resource, 's0').resolve(query.distinct, `${prefix}.distinct`, ctx);
  let inner: string;
  if (ref.kind === 'string_array') {
    inner = `SELECT DISTINCT d.v FROM s0 CROSS JOIN LATERAL unnest(${ref.sql}) AS d(v) WHERE d.v IS NOT NULL`;
  } else if (ref.kind === 'json' || ref.kind === 'json_array') {
    inner = `SELECT DISTINCT d.v FROM s0 CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(${ref.sql}) = 'array' THEN ${ref.sql} ELSE jsonb_build_array(${ref.sql}) END) AS d(v) WHERE d.v IS NOT NULL AND d.v <> 'null'::jsonb`;
  } else {
    const v = NUMERIC.includes(ref.kind) ? `(${ref.sql})::float8` : ref.sql;
    inner = `SELECT DISTINCT ${v} AS v FROM s0 WHERE ${ref.sql} IS NOT NULL`;
  }
  ctes.push(`d AS (${inner})`);
  const sel = pagedSelect(ctes, 'd', 'd.v AS __qv', ' ORDER BY d.v', query.page, ctx, cap);
  return { text: sel.text, values: ctx.values, kind: 'distinct', paged: sel.paged, cap, clamped: sel.clamped, offset: sel.offset };
}

/**
 * stat: upstream's answer, `{results}` plus `total_count` when `page.limit` is set, and `more: true`
 * when the answer stops at the cap (QUERY_LIMITS.results) with rows left.
 */
export async function runStat(
  db: SqlRunner,
  resource: Resource,
  query: StatisticsQuery,
  scope: Condition[],
  opts: CompileOptions = {},
): Promise<Record<string, unknown>> {
  const c = compileStat(resource, query, scope, opts);
  const rows = await execute(db, c.text, c.values, opts.prefix ?? 'query');
  let live = c.paged ? rows.filter((r) => r.__qrow !== null && r.__qrow !== undefined) : rows;
  let more = false;
  if (!c.paged && live.length > c.cap) {
    live = live.slice(0, c.cap);
    more = true;
  }
  const results = c.kind === 'distinct' ? live.map((r) => r.__qv) : live.map((r) => (c.toObject as NonNullable<CompiledStat['toObject']>)(r));
  const out: Record<string, unknown> = { results };
  if (c.paged) {
    out.total_count = Number(rows[0]?.__qtotal ?? 0);
    if (c.clamped && (c.offset ?? 0) + live.length < (out.total_count as number)) more = true;
  }
  if (more) out.more = true;
  return out;
}
