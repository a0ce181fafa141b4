import { defineResource } from '@platform/query';

/** project_group as the query DSL sees it: API key → column, keyword fields, id tie-breaker. */
export const projectGroupResource = defineResource({
  table: 'project_group',
  idKey: 'project_group_id',
  keywordKeys: ['project_group_id', 'name'],
  minimalKeys: ['project_group_id', 'name', 'parent_group_id', 'workspace_id'],
  fields: {
    project_group_id: { column: 'project_group_id', type: 'string' },
    name: { column: 'name', type: 'string' },
    tags: { column: 'tags', type: 'json' },
    users: { column: 'users', type: 'string_array' },
    reference_id: { column: 'reference_id', type: 'string' },
    is_managed: { column: 'is_managed', type: 'boolean' },
    domain_id: { column: 'domain_id', type: 'string' },
    workspace_id: { column: 'workspace_id', type: 'string' },
    parent_group_id: { column: 'parent_group_id', type: 'string' },
    trusted_account_id: { column: 'trusted_account_id', type: 'string' },
    created_at: { column: 'created_at', type: 'datetime' },
    last_synced_at: { column: 'last_synced_at', type: 'datetime' },
  },
});
