import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { ProjectGroupRow } from './repository';

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

/** A stored row as ProjectGroupInfo. */
export function toProjectGroupInfo(r: ProjectGroupRow) {
  return {
    project_group_id: r.project_group_id,
    name: r.name,
    tags: (r.tags ?? {}) as Record<string, unknown>,
    users: r.users ?? [],
    reference_id: r.reference_id,
    is_managed: r.is_managed,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    parent_group_id: r.parent_group_id,
    trusted_account_id: r.trusted_account_id,
    created_at: isoOrEmpty(r.created_at),
    last_synced_at: isoOrEmpty(r.last_synced_at),
  };
}
