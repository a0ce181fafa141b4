import { isoOrEmpty } from '@platform/core';
import { defineResource } from '@platform/query';

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

export interface JobRow {
  domain_id: string;
  job_id: string;
  workspace_id: string;
  resource_group: string;
  data_source_id: string;
  status: string;
  options: unknown;
  error_code: string;
  error_message: string;
  total_tasks: number;
  remained_tasks: number;
  changed: unknown;
  synced_accounts?: unknown;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export function toJobInfo(r: JobRow) {
  return {
    job_id: r.job_id,
    status: r.status,
    options: (r.options ?? {}) as Record<string, unknown>,
    error_code: r.error_code,
    error_message: r.error_message,
    total_tasks: r.total_tasks,
    remained_tasks: r.remained_tasks,
    changed: (r.changed ?? []) as unknown[],
    // upstream fills it from the plugin's get_tasks answer (account routing, e.g. AWS linked accounts);
    // the built-in answers none.
    synced_accounts: (Array.isArray(r.synced_accounts) ? r.synced_accounts : []) as { account_id: string }[],
    data_source_id: r.data_source_id,
    resource_group: r.resource_group,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
    finished_at: isoOrEmpty(r.finished_at),
  };
}
