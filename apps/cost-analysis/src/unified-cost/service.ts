import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { applyOnly, runAnalyze, runList, runStat, type Query, type StatisticsQuery, type TimeSeriesAnalyzeQuery } from '@platform/query';
import type { Queryable } from '../db';
import { canSee, eqFilters, visibility } from '../scope';
import { toUnifiedCostInfo, unifiedCostResource, type UnifiedCostRow } from './repository';

export class UnifiedCostService {
  constructor(private readonly pool: Queryable) {}

  async get(auth: AuthContext, id: string) {
    const { rows } = await this.pool.query<UnifiedCostRow>(`SELECT * FROM unified_cost WHERE domain_id = $1 AND unified_cost_id = $2`, [auth.domainId, id]);
    if (!rows[0] || !canSee(auth, rows[0])) throw errors.notFound('unified_cost_id', id);
    return toUnifiedCostInfo(rows[0]);
  }

  async list(auth: AuthContext, input: { query?: Query; unified_cost_id?: string }) {
    const scope = [...visibility(auth), ...eqFilters(input, ['unified_cost_id'])];
    const { rows, total_count } = await runList(this.pool, unifiedCostResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toUnifiedCostInfo(r as UnifiedCostRow), input.query?.only)), total_count };
  }

  /** Time-series analyze over billed_month (MONTHLY) or billed_year (YEARLY); `is_confirmed` is a filter. */
  async analyze(auth: AuthContext, input: { query: TimeSeriesAnalyzeQuery; is_confirmed: boolean }) {
    const query = { ...input.query };
    if (query.granularity === 'DAILY') throw errors.invalidParameter('query.granularity', 'DAILY is not supported for unified costs (MONTHLY or YEARLY)');
    if (query.date_field) throw errors.invalidParameter('query.date_field', 'unified cost analyze uses billed_month / billed_year');
    query.date_field = query.granularity === 'YEARLY' ? 'billed_year' : 'billed_month';
    const scope = [...visibility(auth), { key: 'is_confirmed', value: input.is_confirmed, operator: 'eq' }];
    return runAnalyze(this.pool, unifiedCostResource, query, scope);
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.pool, unifiedCostResource, query, visibility(auth));
  }
}
