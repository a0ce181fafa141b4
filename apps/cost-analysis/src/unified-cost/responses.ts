import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, timestamp } from '@platform/http';
import type { UnifiedCostRow } from './repository';

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

/** A row as UnifiedCostInfo: an empty cost map when missing, ISO created_at. */
export function toUnifiedCostInfo(r: UnifiedCostRow) {
  return {
    unified_cost_id: r.unified_cost_id,
    cost: r.cost ?? {},
    billed_month: r.billed_month,
    billed_year: r.billed_year,
    aggregation_date: r.aggregation_date,
    exchange_date: r.exchange_date,
    exchange_source: r.exchange_source,
    currency: r.currency,
    is_confirmed: r.is_confirmed,
    provider: r.provider,
    region_code: r.region_code,
    region_key: r.region_key,
    product: r.product,
    usage_type: r.usage_type,
    usage_unit: r.usage_unit,
    usage_quantity: r.usage_quantity ?? 0,
    service_account_name: r.service_account_name,
    data_source_name: r.data_source_name,
    project_name: r.project_name,
    workspace_name: r.workspace_name,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    data_source_id: r.data_source_id,
    service_account_id: r.service_account_id,
    created_at: isoOrEmpty(r.created_at),
  };
}
