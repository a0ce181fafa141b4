import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** ProjectGroupInfo (the contract, all fields answered; `''` for an unset string or timestamp). */
export const ProjectGroupInfo = z
  .strictObject({
    project_group_id: z.string(),
    name: z.string(),
    tags: structOut,
    users: z.array(z.string()),
    reference_id: z.string(),
    is_managed: z.boolean(),
    domain_id: z.string(),
    workspace_id: z.string(),
    parent_group_id: z.string(),
    trusted_account_id: z.string(),
    created_at: timestamp,
    last_synced_at: timestamp,
  })
  .meta({ id: 'ProjectGroupInfo' });

export const ProjectGroupsInfo = listOf(ProjectGroupInfo).meta({ id: 'ProjectGroupsInfo' });
