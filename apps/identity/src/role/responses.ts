import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { RoleRow } from './repository';

export type CustomRoleType = 'DOMAIN_ADMIN' | 'WORKSPACE_OWNER' | 'WORKSPACE_MEMBER';

const ROLE_TYPE = z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']);

/** RoleInfo (upstream identity v2): a managed role every domain has, or one of the domain's custom roles. */
export const RoleInfo = z
  .strictObject({
    role_id: z.string().describe('The role id: managed-domain-admin, managed-workspace-owner, managed-workspace-member, or a custom role\'s `role-…`.'),
    name: z.string().describe('Display name, unique in the domain.'),
    role_type: ROLE_TYPE.describe('What the role is: it decides which operations its holders may call and which resource group it binds.'),
    permissions: z.array(z.string()).describe('Permissions granted, each a prefix of the permissions it covers (`inventory:` covers `inventory:CloudService.read`); `*` or an empty list: every permission the role type allows.'),
    page_access: z.array(z.string()).describe('Console pages the role opens (`*`: all); kept for the console, not checked by the API.'),
    tags: structOut.describe('Free-form labels.'),
    is_managed: z.boolean().describe('A built-in role, which cannot be changed, disabled or deleted.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('DISABLED: no token is granted with the role, and those granted before stopped working.'),
    domain_id: z.string().describe('The role\'s domain.'),
    created_at: timestamp.describe('When the custom role was created (empty for managed roles, which are built in).'),
    updated_at: timestamp.describe('When the custom role last changed (empty for managed roles).'),
  })
  .meta({ id: 'RoleInfo' });

export const RolesInfo = listOf(RoleInfo).meta({ id: 'RolesInfo' });

/** BasicRoleInfo (upstream): a role as a user without a workspace role sees it. */
export const BasicRoleInfo = z
  .strictObject({
    role_id: z.string().describe('The role id.'),
    name: z.string().describe('Display name.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('Whether tokens can be granted with the role.'),
    role_type: ROLE_TYPE.describe('The role type.'),
    domain_id: z.string().describe('The role\'s domain.'),
    created_at: timestamp.describe('When the custom role was created (empty for managed roles).'),
    updated_at: timestamp.describe('When the custom role last changed (empty for managed roles).'),
  })
  .meta({ id: 'BasicRoleInfo' });

export const BasicRolesInfo = listOf(BasicRoleInfo).meta({ id: 'BasicRolesInfo' });

/** A role (managed or custom) as RoleInfo. */
export function toRoleInfo(r: RoleRow) {
  return {
    role_id: r.role_id,
    name: r.name,
    role_type: r.role_type as CustomRoleType,
    permissions: r.permissions ?? [],
    page_access: r.page_access ?? [],
    tags: (r.tags ?? {}) as Record<string, unknown>,
    is_managed: Boolean(r.is_managed),
    state: r.state as 'ENABLED' | 'DISABLED',
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
  };
}

/** BasicRoleInfo: what a user (USER token) may know of a role, to pick one (upstream's list-basic-role). */
export function toBasicRoleInfo(r: RoleRow) {
  return {
    role_id: r.role_id,
    name: r.name,
    state: r.state as 'ENABLED' | 'DISABLED',
    role_type: r.role_type as CustomRoleType,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
  };
}
