import type { ReadRunner } from '@platform/db';

/** A `unified_cost` row as stored (builder.ts writes them from the collected costs). */
export interface UnifiedCostRow {
  unified_cost_id: string;
  cost: Record<string, number>;
  billed_month: string;
  billed_year: string;
  aggregation_date: string;
  exchange_date: string;
  exchange_source: string;
  currency: string;
  is_confirmed: boolean;
  provider: string;
  region_code: string;
  region_key: string;
  product: string;
  usage_type: string;
  usage_unit: string;
  usage_quantity: number;
  service_account_name: string;
  data_source_name: string;
  project_name: string;
  workspace_name: string;
  domain_id: string;
  workspace_id: string;
  project_id: string;
  data_source_id: string;
  service_account_id: string;
  created_at: Date;
}

/** The API's reads of the `unified_cost` table (list, stat and analyze read through fields.ts). */
export class UnifiedCostRepository {
  /** The unified cost by id in the domain, on the runner given (the read router's choice for the caller). */
  async find(db: ReadRunner, domainId: string, unifiedCostId: string): Promise<UnifiedCostRow | undefined> {
    const { rows } = await db.query<UnifiedCostRow>(`SELECT * FROM unified_cost WHERE domain_id = $1 AND unified_cost_id = $2`, [domainId, unifiedCostId]);
    return rows[0];
  }
}
