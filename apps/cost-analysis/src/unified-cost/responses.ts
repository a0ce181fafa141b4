import { z } from 'zod';
import { listOf, timestamp } from '@platform/http';

/** UnifiedCostInfo: `cost` holds the amount in every unified currency (currency → amount). */
export const UnifiedCostInfo = z
  .strictObject({
    unified_cost_id: z.string(),
    cost: z.record(z.string(), z.number()),
    billed_month: z.string(),
    billed_year: z.string(),
    aggregation_date: z.string(),
    exchange_date: z.string(),
    exchange_source: z.string(),
    currency: z.string(),
    is_confirmed: z.boolean(),
    provider: z.string(),
    region_code: z.string(),
    region_key: z.string(),
    product: z.string(),
    usage_type: z.string(),
    usage_unit: z.string(),
    usage_quantity: z.number(),
    service_account_name: z.string(),
    data_source_name: z.string(),
    project_name: z.string(),
    workspace_name: z.string(),
    domain_id: z.string(),
    workspace_id: z.string(),
    project_id: z.string(),
    data_source_id: z.string(),
    service_account_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'UnifiedCostInfo' });

export const UnifiedCostsInfo = listOf(UnifiedCostInfo).meta({ id: 'UnifiedCostsInfo' });
