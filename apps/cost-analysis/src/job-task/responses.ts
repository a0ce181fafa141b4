import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';
import { ChangedInfo } from '../job/responses';

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
