import type { AuthContext } from '@platform/auth';
import { projectScope, type DirectoryClient } from '@platform/directory';
import { errors } from '@platform/errors';
import { applyOnly, runAnalyze, runList, runStat, type Condition, type Query, type StatisticsQuery, type TimeSeriesAnalyzeQuery, eqConditions } from '@platform/query';
import type { ReadRouter } from '@platform/db';
import { canSee, visibility } from '../scope';
import { unifiedCostResource } from './fields';
import { UnifiedCostRepository, type UnifiedCostRow } from './repository';
import { toUnifiedCostInfo } from './responses';

/**
 * Unified costs as a caller may read them: their domain and workspace, and for a WORKSPACE_MEMBER only
 * the costs of their projects (upstream's `users_projects`; the shared rule of libs/directory). Costs of
 * no project (a workspace's unattributed costs) are not a member's.
 */
export class UnifiedCostService {
  private readonly repository = new UnifiedCostRepository();

  constructor(
    private readonly reads: ReadRouter,
    private readonly directory: DirectoryClient,
  ) {}

  private async scope(auth: AuthContext): Promise<Condition[]> {
    return [...visibility(auth), ...(await projectScope(this.directory, auth)).conditions()];
  }

  async get(auth: AuthContext, id: string) {
    const row = await this.repository.find(this.reads.for(auth), auth.domainId, id);
    if (!row || !canSee(auth, row) || !(await projectScope(this.directory, auth)).allows(row.project_id)) {
      throw errors.notFound('unified_cost_id', id);
    }
    return toUnifiedCostInfo(row);
  }

  async list(auth: AuthContext, input: { query?: Query; unified_cost_id?: string }) {
    const scope = [...(await this.scope(auth)), ...eqConditions(input, ['unified_cost_id'])];
    const { rows, total_count } = await runList(this.reads.for(auth), unifiedCostResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toUnifiedCostInfo(r as UnifiedCostRow), input.query?.only)), total_count };
  }

  /**
   * Time-series analyze over billed_month (MONTHLY) or billed_year (YEARLY). `is_confirmed: true` keeps
   * the confirmed months only; false or missing (the same to a proto3 client) filters nothing, as upstream.
   */
  async analyze(auth: AuthContext, input: { query: TimeSeriesAnalyzeQuery; is_confirmed?: boolean }) {
    const query = { ...input.query };
    if (query.granularity === 'DAILY') throw errors.invalidParameter('query.granularity', 'DAILY is not supported for unified costs (MONTHLY or YEARLY)');
    if (query.date_field) throw errors.invalidParameter('query.date_field', 'unified cost analyze uses billed_month / billed_year');
    query.date_field = query.granularity === 'YEARLY' ? 'billed_year' : 'billed_month';
    const scope: Condition[] = await this.scope(auth);
    if (input.is_confirmed) scope.push({ key: 'is_confirmed', value: true, operator: 'eq' });
    return runAnalyze(this.reads.for(auth), unifiedCostResource, query, scope);
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.reads.for(auth), unifiedCostResource, query, await this.scope(auth));
  }
}
