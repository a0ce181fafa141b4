import { defineResource } from '@platform/query';

/** event as the query DSL sees it: API key → column, keyword fields, id tie-breaker. */
export const eventResource = defineResource({
  table: 'event',
  idKey: 'event_id',
  keywordKeys: ['event_id', 'name', 'description', 'task_id'],
  minimalKeys: ['event_id', 'event_type', 'name', 'task_id', 'user_id', 'created_at'],
  fields: {
    event_id: { column: 'event_id', type: 'string', notNull: true },
    event_type: { column: 'event_type', type: 'string', notNull: true },
    name: { column: 'name', type: 'string', notNull: true },
    description: { column: 'description', type: 'string', notNull: true },
    user_type: { column: 'user_type', type: 'string', notNull: true },
    user_id: { column: 'user_id', type: 'string', notNull: true },
    // upstream's current names of user_type / user_id
    created_type: { column: 'user_type', type: 'string', notNull: true },
    created_by: { column: 'user_id', type: 'string', notNull: true },
    additional_info: { column: 'additional_info', type: 'json', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    project_id: { column: 'project_id', type: 'string', notNull: true },
    task_id: { column: 'task_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
  },
});
