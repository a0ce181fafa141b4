import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { JobRow } from './repository';

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

/** A row as JobInfo: empty objects and lists for missing JSON, ISO timestamps. */
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
