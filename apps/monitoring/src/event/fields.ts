import { defineResource } from '@platform/query';

/** event as the query DSL sees it; `resource_id` is the resource's id kept in its own column. */
export const eventResource = defineResource({
  table: 'event',
  idKey: 'event_id',
  keywordKeys: ['event_id', 'title'],
  minimalKeys: ['event_id', 'event_key', 'event_type', 'title', 'severity', 'alert_id', 'created_at'],
  dateKey: 'created_at',
  fields: {
    event_id: { column: 'event_id', type: 'string' },
    event_key: { column: 'event_key', type: 'string' },
    event_type: { column: 'event_type', type: 'string' },
    title: { column: 'title', type: 'string' },
    description: { column: 'description', type: 'string' },
    severity: { column: 'severity', type: 'string' },
    rule: { column: 'rule', type: 'string' },
    image_url: { column: 'image_url', type: 'string' },
    resource: { column: 'resource', type: 'json' },
    resource_id: { column: 'resource_id', type: 'string' },
    provider: { column: 'provider', type: 'string' },
    account: { column: 'account', type: 'string' },
    additional_info: { column: 'additional_info', type: 'json' },
    raw_data: { column: 'raw_data', type: 'json' },
    domain_id: { column: 'domain_id', type: 'string' },
    workspace_id: { column: 'workspace_id', type: 'string' },
    project_id: { column: 'project_id', type: 'string' },
    alert_id: { column: 'alert_id', type: 'string' },
    webhook_id: { column: 'webhook_id', type: 'string' },
    created_at: { column: 'created_at', type: 'datetime' },
    occurred_at: { column: 'occurred_at', type: 'datetime' },
  },
});
