import type { PoolClient } from '@platform/db';
import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { deleteDataSourceCosts } from '../cost-rows';

/** A `data_source` row as stored (secret_data, sealed, is read by secret.ts only). */
export interface DataSourceRow {
  domain_id: string;
  data_source_id: string;
  workspace_id: string;
  resource_group: string;
  name: string;
  state: string;
  data_source_type: string;
  provider: string;
  secret_type: string;
  secret_filter: unknown;
  plugin_info: unknown;
  warehouse_info: unknown;
  template: unknown;
  permissions: unknown;
  tags: unknown;
  cost_tag_keys: string[];
  cost_additional_info_keys: string[];
  cost_data_keys: string[];
  created_at: Date;
  updated_at: Date;
  last_synchronized_at: Date | null;
  schedule_state: string;
  schedule_hours: number[] | null;
  next_sync_at: Date | null;
}

/** upstream's WarehouseInfo: the warehouse a WAREHOUSE data source reads its costs from. */
export interface WarehouseInfo {
  type: string;
}

export type DataSourceType = 'LOCAL' | 'EXTERNAL' | 'WAREHOUSE';

export interface PluginInfo {
  plugin_id: string;
  version: string;
  options: Record<string, unknown>;
  metadata: Record<string, unknown>;
  secret_id: string;
  schema_id: string;
  upgrade_mode: string;
}

type DataSourceKey = Pick<DataSourceRow, 'domain_id' | 'data_source_id'>;

/**
 * The data source resource's reads and writes of `data_source`, and what deregister removes with it
 * (sync.ts runs the sync's own statements; scheduler.ts its due scan).
 */
export class DataSourceRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** The data source by id in the domain, through `db` (the primary's client, or the replica's for a get). */
  find(domainId: string, dataSourceId: string, db: PrismaClient = this.prisma) {
    return db.dataSource.findUnique({ where: { domain_id_data_source_id: { domain_id: domainId, data_source_id: dataSourceId } } });
  }

  create(data: Prisma.DataSourceUncheckedCreateInput) {
    return this.prisma.dataSource.create({ data });
  }

  update(ds: DataSourceKey, data: Prisma.DataSourceUpdateInput) {
    return this.prisma.dataSource.update({ where: { domain_id_data_source_id: { domain_id: ds.domain_id, data_source_id: ds.data_source_id } }, data });
  }

  /** Cancels the data source's IN_PROGRESS jobs and their unfinished tasks. */
  async cancelRunningJobs(client: PoolClient, ds: DataSourceKey): Promise<void> {
    const d = [ds.domain_id, ds.data_source_id];
    await client.query(`UPDATE job SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND data_source_id = $2 AND status = 'IN_PROGRESS'`, d);
    await client.query(
      `UPDATE job_task SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND data_source_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
      d,
    );
  }

  /** Deletes the data source's cost rows; answers the billed months they were in. */
  deleteCosts(client: PoolClient, ds: DataSourceKey): Promise<string[]> {
    return deleteDataSourceCosts(client, ds.domain_id, ds.data_source_id);
  }

  async delete(client: PoolClient, ds: DataSourceKey): Promise<void> {
    await client.query(`DELETE FROM data_source WHERE domain_id = $1 AND data_source_id = $2`, [ds.domain_id, ds.data_source_id]);
  }
}
