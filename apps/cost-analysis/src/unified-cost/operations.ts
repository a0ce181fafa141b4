import { z } from 'zod';
import { id, operation, request, statOperation } from '@platform/http';
import { QuerySchema, TimeSeriesAnalyzeQuerySchema } from '@platform/query';
import { ADMIN_AND_OWNER } from '../scope';
import type { UnifiedCostService } from './service';

// upstream lets members read their own projects' costs; our tokens carry no project membership, so
// unified costs are for domain admins and workspace owners (see docs/decisions/cost-analysis.md).
const read = { permission: 'cost-analysis:UnifiedCost.read', roles: ADMIN_AND_OWNER };

export function unifiedCostOperations(service: UnifiedCostService) {
  return [
    operation({
      path: '/cost-analysis/v1/unified-cost/get',
      access: read,
      schema: request({ unified_cost_id: id }),
      handler: (input, { auth }) => service.get(auth, input.unified_cost_id),
    }),
    operation({
      path: '/cost-analysis/v1/unified-cost/list',
      access: read,
      schema: request({ query: QuerySchema.optional(), unified_cost_id: z.string().optional() }),
      handler: (input, { auth }) => service.list(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/unified-cost/analyze',
      access: read,
      schema: request({ query: TimeSeriesAnalyzeQuerySchema, is_confirmed: z.boolean() }),
      handler: (input, { auth }) => service.analyze(auth, input),
    }),
    statOperation('/cost-analysis/v1/unified-cost/stat', read, service),
  ];
}
