import { defineResource, type ResourceSpec } from '@platform/query';

/** Keyword fields: upstream's _KEYWORD_FILTER of cloud_service_service.py. */
const KEYWORD_KEYS = ['cloud_service_id', 'name', 'ip_addresses', 'cloud_service_group', 'cloud_service_type', 'reference.resource_id'];

/**
 * cloud_service as the query DSL sees it: API key → column. `data`, `metadata`, `tags`, `tag_keys`,
 * `reference` and `collection_info` are jsonb, so every dotted key below them (`data.power_state`,
 * `tags.env`) can be filtered, sorted, grouped and exported.
 */
const spec: ResourceSpec = {
  table: 'cloud_service',
  idKey: 'cloud_service_id',
  keywordKeys: KEYWORD_KEYS,
  dateKey: 'created_at',
  minimalKeys: ['cloud_service_id', 'name', 'state', 'provider', 'cloud_service_group', 'cloud_service_type', 'reference', 'region_code', 'project_id'],
  fields: {
    cloud_service_id: { column: 'cloud_service_id', type: 'string' },
    name: { column: 'name', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    account: { column: 'account', type: 'string', notNull: true },
    instance_type: { column: 'instance_type', type: 'string', notNull: true },
    instance_size: { column: 'instance_size', type: 'number', notNull: true },
    ip_addresses: { column: 'ip_addresses', type: 'string_array' },
    cloud_service_type: { column: 'cloud_service_type', type: 'string', notNull: true },
    cloud_service_group: { column: 'cloud_service_group', type: 'string', notNull: true },
    provider: { column: 'provider', type: 'string', notNull: true },
    ref_cloud_service_type: { column: 'ref_cloud_service_type', type: 'string', notNull: true },
    data: { column: 'data', type: 'json' },
    metadata: { column: 'metadata', type: 'json' },
    reference: { column: 'reference', type: 'json' },
    tags: { column: 'tags', type: 'json' },
    tag_keys: { column: 'tag_keys', type: 'json' },
    collection_info: { column: 'collection_info', type: 'json' },
    region_code: { column: 'region_code', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    project_id: { column: 'project_id', type: 'string', notNull: true },
    launched_at: { column: 'launched_at', type: 'datetime' },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
    deleted_at: { column: 'deleted_at', type: 'datetime' },
  },
};

/** list / stat / analyze: `page.limit` defaults to and is capped at 1000 (upstream's set_query_page_limit). */
export const cloudServiceResource = defineResource(spec);

/** export: the same fields, no page cap (upstream's export reads every matching record). */
export const cloudServiceExportResource = defineResource({ ...spec, maxLimit: 0 });
