import { defineResource } from '@platform/query';

/**
 * Roles as the query DSL sees them: `role_view` (migration 20261126212406_custom_roles), the three
 * managed roles of every domain followed by the domain's custom roles (table `role`). Every read is
 * scoped by `domain_id`.
 */
export const roleResource = defineResource({
  table: 'role_view',
  idKey: 'role_id',
  keywordKeys: ['role_id', 'name'],
  minimalKeys: ['role_id', 'name', 'role_type', 'is_managed', 'state'],
  fields: {
    role_id: { column: 'role_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    role_type: { column: 'role_type', type: 'string', notNull: true },
    permissions: { column: 'permissions', type: 'string_array' },
    page_access: { column: 'page_access', type: 'string_array' },
    tags: { column: 'tags', type: 'json' },
    is_managed: { column: 'is_managed', type: 'boolean', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime' },
    updated_at: { column: 'updated_at', type: 'datetime' },
  },
});
