import { defineResource } from '@platform/query';

/** data_source as the query DSL sees it. */
export const dataSourceResource = defineResource({
  table: 'data_source',
  idKey: 'data_source_id',
  keywordKeys: ['data_source_id', 'name', 'provider'],
  minimalKeys: ['data_source_id', 'name', 'state', 'monitoring_type', 'provider'],
  dateKey: 'created_at',
  fields: {
    data_source_id: { column: 'data_source_id', type: 'string' },
    name: { column: 'name', type: 'string' },
    state: { column: 'state', type: 'string' },
    monitoring_type: { column: 'monitoring_type', type: 'string' },
    provider: { column: 'provider', type: 'string' },
    capability: { column: 'capability', type: 'json' },
    plugin_info: { column: 'plugin_info', type: 'json' },
    tags: { column: 'tags', type: 'json' },
    domain_id: { column: 'domain_id', type: 'string' },
    created_at: { column: 'created_at', type: 'datetime' },
  },
});
