import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { DataSourceRow, PluginInfo, WarehouseInfo } from './repository';
import { toScheduleInfo } from './schedule';

const resource_group = z.enum(['DOMAIN', 'WORKSPACE']);

/** The plugin a data source runs (secret data never answered; `secret_id` names where it is kept). */
export const CostDataSourcePluginInfo = z
  .strictObject({
    plugin_id: z.string(),
    version: z.string(),
    options: structOut,
    metadata: structOut,
    secret_id: z.string(),
    schema_id: z.string(),
    upgrade_mode: z.enum(['AUTO', 'MANUAL', 'NONE']),
  })
  .meta({ id: 'DataSourcePluginInfo' });

/** upstream's WarehouseInfo: the cost warehouse a WAREHOUSE data source reads (upstream's: Databricks). */
export const CostDataSourceWarehouseInfo = z
  .strictObject({ type: z.enum(['DATABRICKS']).describe("The warehouse's kind (upstream's WarehouseType).") })
  .meta({ id: 'DataSourceWarehouseInfo' });

/** When the scheduler syncs a data source: `hours` (UTC), `hour` the first of them (null with none). */
export const ScheduleInfo = z
  .strictObject({ state: z.enum(['ENABLED', 'DISABLED']), hour: z.number().int().nullable(), hours: z.array(z.number().int()) })
  .meta({ id: 'ScheduleInfo' });

/** DataSourceInfo of cost analysis (upstream's), plus `next_sync_at` (null while none is due). */
export const CostDataSourceInfo = z
  .strictObject({
    data_source_id: z.string(),
    name: z.string(),
    state: z.enum(['ENABLED', 'DISABLED']),
    data_source_type: z
      .enum(['LOCAL', 'EXTERNAL', 'WAREHOUSE'])
      .describe('EXTERNAL: a plugin collects its costs; LOCAL: no plugin and no sync; WAREHOUSE: costs stay in a warehouse and are not synced here.'),
    permissions: structOut,
    provider: z.string(),
    secret_type: z
      .enum(['MANUAL', 'USE_SERVICE_ACCOUNT_SECRET', ''])
      .describe("How the plugin's secret is found; empty for a LOCAL or WAREHOUSE data source, which has no plugin (as upstream)."),
    secret_filter: structOut,
    plugin_info: CostDataSourcePluginInfo.optional().describe('The plugin that collects the costs; absent for a LOCAL or WAREHOUSE data source, which has none.'),
    warehouse_info: CostDataSourceWarehouseInfo.optional().describe('The warehouse a WAREHOUSE data source reads; absent for other types.'),
    template: structOut,
    tags: structOut,
    cost_tag_keys: z.array(z.string()),
    cost_additional_info_keys: z.array(z.string()),
    cost_data_keys: z.array(z.string()),
    data_source_account_count: z.number().int(),
    connected_workspace_count: z.number().int(),
    resource_group,
    domain_id: z.string(),
    workspace_id: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    last_synchronized_at: timestamp,
    schedule: ScheduleInfo,
    next_sync_at: z.string().nullable(),
  })
  .meta({ id: 'DataSourceInfo' });

export const CostDataSourcesInfo = listOf(CostDataSourceInfo).meta({ id: 'DataSourcesInfo' });

/** DataSourceInfo (upstream's), secret data never included. */
export function toDataSourceInfo(r: DataSourceRow) {
  return {
    data_source_id: r.data_source_id,
    name: r.name,
    state: r.state,
    data_source_type: r.data_source_type,
    permissions: (r.permissions ?? {}) as Record<string, unknown>,
    provider: r.provider,
    // upstream stores none for a data source without a plugin (its register sets secret_type None).
    secret_type: r.data_source_type === 'EXTERNAL' ? r.secret_type : '',
    secret_filter: (r.secret_filter ?? {}) as Record<string, unknown>,
    // Message fields upstream leaves unset are absent, as protobuf's JSON leaves them: plugin_info for
    // LOCAL and WAREHOUSE, warehouse_info for LOCAL and EXTERNAL.
    ...(r.plugin_info ? { plugin_info: r.plugin_info as PluginInfo } : {}),
    ...(r.warehouse_info ? { warehouse_info: r.warehouse_info as WarehouseInfo } : {}),
    template: (r.template ?? {}) as Record<string, unknown>,
    tags: (r.tags ?? {}) as Record<string, unknown>,
    cost_tag_keys: r.cost_tag_keys ?? [],
    cost_additional_info_keys: r.cost_additional_info_keys ?? [],
    cost_data_keys: r.cost_data_keys ?? [],
    data_source_account_count: 0,
    connected_workspace_count: 0,
    resource_group: r.resource_group,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
    last_synchronized_at: isoOrEmpty(r.last_synchronized_at),
    schedule: toScheduleInfo(r.schedule_state, r.schedule_hours),
    // Ours (upstream has no such field): when the scheduler syncs it next; null while it will not.
    next_sync_at: r.next_sync_at ? r.next_sync_at.toISOString() : null,
  };
}
