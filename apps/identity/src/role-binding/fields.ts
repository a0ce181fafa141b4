import { defineResource } from '@platform/query';

/** role_binding as the query DSL sees it. */
export const roleBindingResource = defineResource({
  table: 'role_binding',
  idKey: 'role_binding_id',
  keywordKeys: ['role_binding_id', 'user_id', 'role_id'],
  minimalKeys: ['role_binding_id', 'user_id', 'role_type', 'workspace_id'],
  fields: {
    role_binding_id: { column: 'role_binding_id', type: 'string', notNull: true },
    role_type: { column: 'role_type', type: 'string', notNull: true },
    resource_group: { column: 'resource_group', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    role_id: { column: 'role_id', type: 'string', notNull: true },
    user_id: { column: 'user_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
  },
});
