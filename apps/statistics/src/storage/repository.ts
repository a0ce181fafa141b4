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

export interface StorageRow {
  domain_id: string;
  storage_id: string;
  name: string;
  state: string;
  options: unknown;
  capability: unknown;
  plugin_info: unknown;
  tags: unknown;
  user_id: string;
  created_at: Date;
}

/** plugin_info as stored: never a secret value, only the secret's id. */
export interface StoredPluginInfo {
  plugin_id: string;
  version: string;
  options: Record<string, unknown>;
  secret_id: string;
  metadata: Record<string, unknown>;
}
