import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { WorkspaceRow } from './repository';

/** WorkspaceInfo (upstream identity v2), the fields this platform models. */
export const WorkspaceInfo = z
  .strictObject({
    workspace_id: z.string().describe('The workspace id (`workspace-…`, or the one the admin CLI was given).'),
    name: z.string().describe('Display name.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('ENABLED, or DISABLED: no token can be granted for it and its tokens stop working.'),
    tags: structOut.describe('Free-form key/value labels.'),
    created_by: z.string().describe('The user who created it (empty for the bootstrap and the admin CLI).'),
    references: z.array(z.string()).describe('Ids of the trusted accounts that created it (always empty: no sync is modelled).'),
    is_managed: z.boolean().describe('Managed by a trusted account sync (always false here: no sync is modelled).'),
    packages: z.array(z.string()).describe('Packages installed in the workspace (always empty: packages are not modelled).'),
    is_dormant: z.boolean().describe('Dormant workspace (always false: dormancy is not modelled).'),
    dormant_ttl: z.number().int().describe('Days without cost before it turns dormant (0: dormancy is not modelled).'),
    service_account_count: z.number().int().describe('Service accounts of the workspace (0: service accounts are not modelled).'),
    user_count: z.number().int().describe('Users with a role binding in the workspace.'),
    cost_info: z
      .strictObject({ day: z.number().describe("Yesterday's cost (0: not computed here)."), month: z.number().describe("This month's cost (0: not computed here).") })
      .describe("The workspace's recent cost, as upstream's dormancy check reads it."),
    workspace_group_id: z.string().describe('Workspace group (always empty: workspace groups are not modelled).'),
    domain_id: z.string().describe('The domain the workspace belongs to.'),
    trusted_account_id: z.string().describe('The trusted account that manages it (always empty: no sync is modelled).'),
    created_at: timestamp.describe('When it was created (ISO 8601 UTC).'),
    last_synced_at: timestamp.describe('When a trusted account sync last touched it (always empty).'),
    dormant_updated_at: timestamp.describe('When its dormancy last changed (always empty).'),
    changed_at: timestamp.describe('When its state last changed (empty if never).'),
  })
  .meta({ id: 'WorkspaceInfo' });

export const WorkspacesInfo = listOf(WorkspaceInfo).meta({ id: 'WorkspacesInfo' });

/** A stored row and its user count as WorkspaceInfo (what the platform does not model answered empty). */
export function toWorkspaceInfo(w: WorkspaceRow, userCount = 0) {
  return {
    workspace_id: w.workspace_id,
    name: w.name,
    state: w.state as 'ENABLED' | 'DISABLED',
    tags: (w.tags ?? {}) as Record<string, unknown>,
    created_by: w.created_by,
    references: [] as string[],
    is_managed: w.is_managed,
    packages: [] as string[],
    is_dormant: false,
    dormant_ttl: 0,
    service_account_count: 0,
    user_count: userCount,
    cost_info: { day: 0, month: 0 },
    workspace_group_id: '',
    domain_id: w.domain_id,
    trusted_account_id: '',
    created_at: isoOrEmpty(w.created_at),
    last_synced_at: '',
    dormant_updated_at: '',
    changed_at: isoOrEmpty(w.changed_at),
  };
}
