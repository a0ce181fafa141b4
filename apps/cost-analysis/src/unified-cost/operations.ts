import { z } from 'zod';
import { AnalyzeResult, id, idOperation, operation, QUERY_ERRORS, request, statOperation } from '@platform/http';
import { QuerySchema, TimeSeriesAnalyzeQuerySchema } from '@platform/query';
import { WORKSPACE_ROLES } from '@platform/auth';
import type { UnifiedCostService } from './service';
import { UnifiedCostInfo, UnifiedCostsInfo } from './responses';

// Domain admins, workspace owners and workspace members, who read only their projects' costs (the
// service scopes them; see docs/decisions/cost-analysis.md).
const read = { permission: 'cost-analysis:UnifiedCost.read', roles: WORKSPACE_ROLES };

export function unifiedCostOperations(service: UnifiedCostService) {
  return [
    idOperation({
      path: '/cost-analysis/v1/unified-cost/get',
      access: read,
      id: { unified_cost_id: id },
      response: UnifiedCostInfo,
      call: (auth, unifiedCostId) => service.get(auth, unifiedCostId),
    }),
    operation({
      path: '/cost-analysis/v1/unified-cost/list',
      access: read,
      schema: request({ query: QuerySchema.optional(), unified_cost_id: z.string().optional() }),
      response: UnifiedCostsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/unified-cost/analyze',
      access: read,
      // upstream's plain `bool is_confirmed`: a proto3 client leaves false out; both read as "not filtered"
      // (docs/decisions/cost-analysis.md)
      schema: request({ query: TimeSeriesAnalyzeQuerySchema, is_confirmed: z.boolean().optional() }),
      response: AnalyzeResult,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.analyze(auth, input),
    }),
    statOperation('/cost-analysis/v1/unified-cost/stat', read, service),
  ];
}
