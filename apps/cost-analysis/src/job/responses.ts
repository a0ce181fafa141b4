import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** A period a sync changed: upstream's ChangedInfo. */
export const ChangedInfo = z
  .strictObject({ start: z.string(), end: z.string().nullable().optional(), filter: structOut.optional() })
  .meta({ id: 'ChangedInfo' });

/** JobInfo: one sync of a data source. */
export const JobInfo = z
  .strictObject({
    job_id: z.string(),
    status: z.enum(['IN_PROGRESS', 'SUCCESS', 'FAILURE', 'TIMEOUT', 'CANCELED']),
    options: structOut,
    error_code: z.string(),
    error_message: z.string(),
    total_tasks: z.number().int(),
    remained_tasks: z.number().int(),
    changed: z.array(ChangedInfo),
    data_source_id: z.string(),
    resource_group: z.enum(['DOMAIN', 'WORKSPACE']),
    domain_id: z.string(),
    workspace_id: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
    finished_at: timestamp,
  })
  .meta({ id: 'JobInfo' });

export const JobsInfo = listOf(JobInfo).meta({ id: 'JobsInfo' });
