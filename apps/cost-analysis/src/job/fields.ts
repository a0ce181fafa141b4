import { defineResource } from '@platform/query';

/** job as the query DSL sees it. */
export const jobResource = defineResource({
  table: 'job',
  idKey: 'job_id',
  keywordKeys: ['job_id'],
  fields: {
    job_id: { column: 'job_id', type: 'string', notNull: true },
    status: { column: 'status', type: 'string', notNull: true },
    options: { column: 'options', type: 'json' },
    error_code: { column: 'error_code', type: 'string', notNull: true },
    error_message: { column: 'error_message', type: 'string', notNull: true },
    total_tasks: { column: 'total_tasks', type: 'integer', notNull: true },
    remained_tasks: { column: 'remained_tasks', type: 'integer', notNull: true },
    changed: { column: 'changed', type: 'json_array' },
    synced_accounts: { column: 'synced_accounts', type: 'json_array' },
    data_source_id: { column: 'data_source_id', type: 'string', notNull: true },
    resource_group: { column: 'resource_group', type: 'string', notNull: true },
    domain_id: { column: 'domain_id', type: 'string', notNull: true },
    workspace_id: { column: 'workspace_id', type: 'string', notNull: true },
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
    updated_at: { column: 'updated_at', type: 'datetime', notNull: true },
    finished_at: { column: 'finished_at', type: 'datetime' },
  },
});
