import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** RoleInfo (upstream identity v2): the managed roles every domain has. */
export const RoleInfo = z
  .strictObject({
    role_id: z.string().describe('The role id (managed-domain-admin, managed-workspace-owner, managed-workspace-member).'),
    name: z.string().describe('Display name.'),
    role_type: z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']).describe('What the role is: it decides which operations its holders may call.'),
    permissions: z.array(z.string()).describe('Permissions granted (`*`: every permission the role type allows).'),
    page_access: z.array(z.string()).describe('Console pages the role opens (`*`: all).'),
    tags: structOut.describe('Free-form labels.'),
    is_managed: z.boolean().describe('A built-in role that cannot be changed (always true here).'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('Always ENABLED.'),
    domain_id: z.string().describe('The caller\'s domain.'),
    created_at: timestamp.describe('Empty: managed roles are built in, not created.'),
    updated_at: timestamp.describe('Empty: managed roles never change.'),
  })
  .meta({ id: 'RoleInfo' });

export const RolesInfo = listOf(RoleInfo).meta({ id: 'RolesInfo' });
