import { defineResource } from '@platform/query';

/**
 * user as the query DSL sees it. The password hash and the MFA secret are not fields: no filter, sort,
 * stat or `only` can reach them.
 */
export const userResource = defineResource({
  table: 'user',
  idKey: 'user_id',
  keywordKeys: ['user_id', 'name', 'email'],
  minimalKeys: ['user_id', 'name', 'state', 'auth_type'],
  fields: {
    user_id: { column: 'user_id', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    state: { column: 'state', type: 'string', notNull: true },
    email: { column: 'email', type: 'string', notNull: true },
    auth_type: { column: 'auth_type', type: 'string', notNull: true },
    language: { column: 'language', type: 'string', notNull: true },
    timezone: { column: 'timezone', type: 'string', notNull: true },
    tags: { column: 'tags', type: 'json' },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    last_accessed_at: { column: 'last_accessed_at', type: 'datetime' },
  },
});
