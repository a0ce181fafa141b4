import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import { ChangedInfo } from '../job/responses';
import type { JobTaskRow } from './repository';

/** JobTaskInfo (the contract) plus `changed` (null until the task finished). */
export const JobTaskInfo = z
  .strictObject({
    job_task_id: z.string(),
    status: z.enum(['PENDING', 'IN_PROGRESS', 'SUCCESS', 'FAILURE', 'TIMEOUT', 'CANCELED']),
    options: structOut,
    changed: ChangedInfo.nullable(),
    created_count: z.number().int(),
    error_code: z.string(),
    error_message: z.string(),
    resource_group: z.enum(['DOMAIN', 'WORKSPACE']),
    domain_id: z.string(),
    workspace_id: z.string(),
    job_id: z.string(),
    data_source_id: z.string(),
    created_at: timestamp,
    started_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp,
  })
  .meta({ id: 'JobTaskInfo' });

export const JobTasksInfo = listOf(JobTaskInfo).meta({ id: 'JobTasksInfo' });

/** A row as JobTaskInfo: `changed` null until known, ISO timestamps. */
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
