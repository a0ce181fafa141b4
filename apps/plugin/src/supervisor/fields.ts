import { defineResource } from '@platform/query';

/** supervisor as the query DSL sees it (secret_digest is not a field: it can be neither filtered nor answered). */
export const supervisorResource = defineResource({
  table: 'supervisor',
  idKey: 'supervisor_id',
  keywordKeys: ['supervisor_id', 'name', 'hostname'],
  minimalKeys: ['supervisor_id', 'name', 'hostname', 'is_public'],
  fields: {
    supervisor_id: { column: 'supervisor_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    hostname: { column: 'hostname', type: 'string', notNull: true },
    is_public: { column: 'is_public', type: 'boolean', notNull: true },
    labels: { column: 'labels', type: 'json_array', notNull: true },
    tags: { column: 'tags', type: 'json', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
  },
});

/** installed_plugin: one plugin version a supervisor runs, and where it answers. */
export const pluginResource = defineResource({
  table: 'installed_plugin',
  // unique per row (supervisor, plugin, version): pages of any sort neither repeat nor skip a row
  idKey: 'plugin_key',
  keywordKeys: ['plugin_id', 'version', 'supervisor_name', 'hostname'],
  minimalKeys: ['plugin_id', 'version', 'state', 'supervisor_id'],
  fields: {
    plugin_id: { column: 'plugin_id', type: 'string', notNull: true },
    version: { column: 'version', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    endpoint: { column: 'endpoint', type: 'string', notNull: true },
    endpoints: { column: 'endpoints', type: 'json_array', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    supervisor_id: { column: 'supervisor_id', type: 'string', notNull: true },
    supervisor_name: { column: 'supervisor_name', type: 'string', notNull: true },
    hostname: { column: 'hostname', type: 'string', notNull: true },
    is_public: { column: 'is_public', type: 'boolean', notNull: true },
    plugin_key: { column: 'plugin_key', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
  },
});
