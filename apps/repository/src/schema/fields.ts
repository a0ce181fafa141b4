import { defineResource } from '@platform/query';

/** schema as the query DSL sees it: API key → column, keyword fields (upstream's: name, labels), id tie-breaker. */
export const schemaResource = defineResource({
  table: 'schema',
  idKey: 'schema_id',
  keywordKeys: ['schema_id', 'name', 'labels'],
  minimalKeys: ['schema_id', 'name', 'sync_mode', 'labels'],
  fields: {
    schema_id: { column: 'schema_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    sync_mode: { column: 'sync_mode', type: 'string', notNull: true },
    sync_options: { column: 'sync_options', type: 'json' },
    schema: { column: 'schema', type: 'json' },
    labels: { column: 'labels', type: 'json_array' },
    tags: { column: 'tags', type: 'json' },
    remote_repository: { column: 'remote_repository', type: 'json' },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
  },
});
