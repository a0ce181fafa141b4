import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, timestamp } from '@platform/http';
import type { RoleBindingRow } from './repository';

export type ResourceGroup = 'DOMAIN' | 'WORKSPACE';

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

/** A stored row as RoleBindingInfo (no workspace groups: workspace_group_id empty). */
export function toRoleBindingInfo(b: RoleBindingRow) {
  return {
    role_binding_id: b.role_binding_id,
    role_type: b.role_type as 'DOMAIN_ADMIN' | 'WORKSPACE_OWNER' | 'WORKSPACE_MEMBER',
    resource_group: b.resource_group as ResourceGroup,
    domain_id: b.domain_id,
    workspace_group_id: '',
    workspace_id: b.workspace_id,
    role_id: b.role_id,
    user_id: b.user_id,
    created_at: isoOrEmpty(b.created_at),
  };
}
