import { defineResource } from '@platform/query';

/** webhook as the query DSL sees it (`requests.total` / `requests.error` are the counter columns). */
export const webhookResource = defineResource({
  table: 'webhook',
  idKey: 'webhook_id',
  keywordKeys: ['webhook_id', 'name'],
  minimalKeys: ['webhook_id', 'name', 'state', 'project_id'],
  dateKey: 'created_at',
  fields: {
    webhook_id: { column: 'webhook_id', type: 'string' },
    name: { column: 'name', type: 'string' },
    state: { column: 'state', type: 'string' },
    access_key: { column: 'access_key', type: 'string' },
    webhook_url: { column: 'webhook_url', type: 'string' },
    capability: { column: 'capability', type: 'json' },
    plugin_info: { column: 'plugin_info', type: 'json' },
    tags: { column: 'tags', type: 'json' },
    'requests.total': { column: 'requests_total', type: 'integer' },
    'requests.error': { column: 'requests_error', type: 'integer' },
    domain_id: { column: 'domain_id', type: 'string' },
    workspace_id: { column: 'workspace_id', type: 'string' },
    project_id: { column: 'project_id', type: 'string' },
    created_at: { column: 'created_at', type: 'datetime' },
  },
});
