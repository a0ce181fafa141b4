import { isoOrEmpty } from '@platform/core';
import { defineResource } from '@platform/query';
import { toScheduleInfo } from './schedule';

export const dataSourceResource = defineResource({
  table: 'data_source',
  idKey: 'data_source_id',
  keywordKeys: ['data_source_id', 'name'],
  minimalKeys: ['data_source_id', 'name', 'state', 'data_source_type', 'provider', 'workspace_id', 'schedule', 'next_sync_at'],
  fields: {
    data_source_id: { column: 'data_source_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    data_source_type: { column: 'data_source_type', type: 'string', notNull: true },
    provider: { column: 'provider', type: 'string', notNull: true },
    secret_type: { column: 'secret_type', type: 'string', notNull: true },
    secret_filter: { column: 'secret_filter', type: 'json' },
    plugin_info: { column: 'plugin_info', type: 'json' },
    warehouse_info: { column: 'warehouse_info', type: 'json' },
    template: { column: 'template', type: 'json' },
    permissions: { column: 'permissions', type: 'json' },
    tags: { column: 'tags', type: 'json' },
    cost_tag_keys: { column: 'cost_tag_keys', type: 'string_array' },
    cost_additional_info_keys: { column: 'cost_additional_info_keys', type: 'string_array' },
    cost_data_keys: { column: 'cost_data_keys', type: 'string_array' },
    resource_group: { column: 'resource_group', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
    last_synchronized_at: { column: 'last_synchronized_at', type: 'datetime' },
    'schedule.state': { column: 'schedule_state', type: 'string', notNull: true },
    next_sync_at: { column: 'next_sync_at', type: 'datetime' },
  },
});

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
