import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** WorkspaceInfo (upstream identity v2), the fields this platform models. */
export const WorkspaceInfo = z
  .strictObject({
    workspace_id: z.string().describe('The workspace id (`workspace-…`, or the one the admin CLI was given).'),
    name: z.string().describe('Display name.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('ENABLED, or DISABLED: no token can be granted for it and its tokens stop working.'),
    tags: structOut.describe('Free-form key/value labels.'),
    created_by: z.string().describe('The user who created it (empty for the bootstrap and the admin CLI).'),
    is_managed: z.boolean().describe('Managed by a trusted account sync (always false here: no sync is modelled).'),
    is_dormant: z.boolean().describe('Dormant workspace (always false: dormancy is not modelled).'),
    user_count: z.number().int().describe('Users with a role binding in the workspace.'),
    workspace_group_id: z.string().describe('Workspace group (always empty: workspace groups are not modelled).'),
    domain_id: z.string().describe('The domain the workspace belongs to.'),
    created_at: timestamp.describe('When it was created (ISO 8601 UTC).'),
    changed_at: timestamp.describe('When its state last changed (empty if never).'),
  })
  .meta({ id: 'WorkspaceInfo' });

export const WorkspacesInfo = listOf(WorkspaceInfo).meta({ id: 'WorkspacesInfo' });
