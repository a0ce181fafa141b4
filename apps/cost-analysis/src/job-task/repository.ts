import { isoOrEmpty } from '@platform/core';
import { defineResource } from '@platform/query';

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

export interface JobTaskRow {
  domain_id: string;
  job_task_id: string;
  workspace_id: string;
  resource_group: string;
  job_id: string;
  data_source_id: string;
  status: string;
  options: unknown;
  created_count: number;
  changed: unknown;
  error_code: string;
  error_message: string;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
  finished_at: Date | null;
}

export function toJobTaskInfo(r: JobTaskRow) {
  return {
    job_task_id: r.job_task_id,
    status: r.status,
    options: (r.options ?? {}) as Record<string, unknown>,
    // upstream's ChangedInfo {start, end, filter}; null while not known (a task not finished yet)
    changed: (r.changed ?? null) as { start: string; end?: string; filter?: Record<string, unknown> } | null,
    created_count: r.created_count,
    error_code: r.error_code,
    error_message: r.error_message,
    resource_group: r.resource_group,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    job_id: r.job_id,
    data_source_id: r.data_source_id,
    created_at: isoOrEmpty(r.created_at),
    started_at: isoOrEmpty(r.started_at),
    updated_at: isoOrEmpty(r.updated_at),
    finished_at: isoOrEmpty(r.finished_at),
  };
}
