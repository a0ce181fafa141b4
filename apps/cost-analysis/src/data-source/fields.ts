import { defineResource } from '@platform/query';

/** data_source as the query DSL sees it (`schedule.state` is the schedule_state column). */
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
