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

export interface WebhookRow {
  domain_id: string;
  webhook_id: string;
  workspace_id: string;
  project_id: string;
  name: string;
  state: string;
  access_key: string;
  webhook_url: string;
  capability: unknown;
  plugin_info: unknown;
  tags: unknown;
  requests_total: bigint | string | number;
  requests_error: bigint | string | number;
  created_at: Date;
  revision?: bigint | string | number;
}
