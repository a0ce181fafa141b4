import type { RoleType } from '@platform/auth';

/** The built-in (managed) roles, as upstream ships them. Each grants every permission its role type allows. */
export const MANAGED_ROLES: Record<'DOMAIN_ADMIN' | 'WORKSPACE_OWNER' | 'WORKSPACE_MEMBER', { roleId: string; permissions: string[] }> = {
  DOMAIN_ADMIN: { roleId: 'managed-domain-admin', permissions: ['*'] },
  WORKSPACE_OWNER: { roleId: 'managed-workspace-owner', permissions: ['*'] },
  WORKSPACE_MEMBER: { roleId: 'managed-workspace-member', permissions: ['*'] },
};

export function managedRole(roleType: RoleType) {
  const r = MANAGED_ROLES[roleType as keyof typeof MANAGED_ROLES];
  if (!r) throw new Error(`no managed role for ${roleType}`);
  return r;
}
