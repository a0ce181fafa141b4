import { z } from 'zod';
import { listOf, timestamp } from '@platform/http';

/** RoleBindingInfo (upstream identity v2). */
export const RoleBindingInfo = z
  .strictObject({
    role_binding_id: z.string().describe('The binding id (`rb-…`).'),
    role_type: z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']).describe('The type of the bound role.'),
    resource_group: z.enum(['DOMAIN', 'WORKSPACE']).describe('DOMAIN (a DOMAIN_ADMIN binding) or WORKSPACE (a role in one workspace).'),
    domain_id: z.string().describe('The domain.'),
    workspace_group_id: z.string().describe('Always empty: workspace groups are not modelled.'),
    workspace_id: z.string().describe('The workspace of a WORKSPACE binding; empty for DOMAIN.'),
    role_id: z.string().describe('The bound role.'),
    user_id: z.string().describe('The user who holds the role.'),
    created_at: timestamp.describe('When the binding was created.'),
  })
  .meta({ id: 'RoleBindingInfo' });

export const RoleBindingsInfo = listOf(RoleBindingInfo).meta({ id: 'RoleBindingsInfo' });
