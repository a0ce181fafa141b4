import { defineResource } from '@platform/query';

/** storage as the query DSL sees it: API key → column, keyword fields, id tie-breaker. */
export const storageResource = defineResource({
  table: 'storage',
  idKey: 'storage_id',
  keywordKeys: ['storage_id', 'name'],
  minimalKeys: ['storage_id', 'name', 'state', 'plugin_info.plugin_id'],
  fields: {
    storage_id: { column: 'storage_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    options: { column: 'options', type: 'json' },
    capability: { column: 'capability', type: 'json' },
    plugin_info: { column: 'plugin_info', type: 'json' },
    tags: { column: 'tags', type: 'json' },
    user_id: { column: 'user_id', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
  },
});
