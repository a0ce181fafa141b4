import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** A period a sync changed: upstream's ChangedInfo. */
export const ChangedInfo = z
  .strictObject({ start: z.string(), end: z.string().nullable().optional(), filter: structOut.optional() })
  .meta({ id: 'ChangedInfo' });

/** An account a sync collected: upstream's SyncedAccountInfo. */
export const SyncedAccountInfo = z
  .strictObject({ account_id: z.string().describe('The id of the account, as the plugin names it.') })
  .meta({ id: 'SyncedAccountInfo' });

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
    synced_accounts: z
      .array(SyncedAccountInfo)
      .describe("The accounts the plugin's get_tasks said the job syncs (upstream's); always empty here, as no built-in plugin routes by account."),
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
