import { defineResource } from '@platform/query';

/** workspace as the query DSL sees it. */
export const workspaceResource = defineResource({
  table: 'workspace',
  idKey: 'workspace_id',
  keywordKeys: ['workspace_id', 'name'],
  minimalKeys: ['workspace_id', 'name', 'state'],
  fields: {
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    tags: { column: 'tags', type: 'json' },
    created_by: { column: 'created_by', type: 'string', notNull: true },
    is_managed: { column: 'is_managed', type: 'boolean', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    changed_at: { column: 'changed_at', type: 'datetime' },
  },
});
