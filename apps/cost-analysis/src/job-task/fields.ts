import { defineResource } from '@platform/query';

/** job_task as the query DSL sees it. */
export const jobTaskResource = defineResource({
  table: 'job_task',
  idKey: 'job_task_id',
  keywordKeys: ['job_task_id'],
  fields: {
    job_task_id: { column: 'job_task_id', type: 'string', notNull: true },
    status: { column: 'status', type: 'string', notNull: true },
    options: { column: 'options', type: 'json' },
    created_count: { column: 'created_count', type: 'integer', notNull: true },
    changed: { column: 'changed', type: 'json' },
    error_code: { column: 'error_code', type: 'string', notNull: true },
    error_message: { column: 'error_message', type: 'string', notNull: true },
    resource_group: { column: 'resource_group', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    job_id: { column: 'job_id', type: 'string', notNull: true },
    data_source_id: { column: 'data_source_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    started_at: { column: 'started_at', type: 'datetime' },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
    finished_at: { column: 'finished_at', type: 'datetime' },
  },
});
