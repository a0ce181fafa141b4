import { defineResource } from '@platform/query';

/** project as the query DSL sees it. */
export const projectResource = defineResource({
  table: 'project',
  idKey: 'project_id',
  keywordKeys: ['project_id', 'name'],
  minimalKeys: ['project_id', 'name', 'project_group_id', 'workspace_id'],
  fields: {
    project_id: { column: 'project_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    project_type: { column: 'project_type', type: 'string', notNull: true },
    tags: { column: 'tags', type: 'json' },
    users: { column: 'users', type: 'string_array' },
    created_by: { column: 'created_by', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    project_group_id: { column: 'project_group_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
  },
});
