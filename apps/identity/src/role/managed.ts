import type { RoleType } from '@platform/auth';
import type { RoleRow } from './repository';
import type { CustomRoleType } from './responses';

/** The built-in (managed) roles, as upstream ships them. Each grants every permission its role type allows. */
export const MANAGED_ROLES: Record<'DOMAIN_ADMIN' | 'WORKSPACE_OWNER' | 'WORKSPACE_MEMBER', { roleId: string; permissions: string[] }> = {
  DOMAIN_ADMIN: { roleId: 'managed-domain-admin', permissions: ['*'] },
  WORKSPACE_OWNER: { roleId: 'managed-workspace-owner', permissions: ['*'] },
  WORKSPACE_MEMBER: { roleId: 'managed-workspace-member', permissions: ['*'] },
};

/**
 * The role whose holders keep a domain administrable: the managed DOMAIN_ADMIN role. A custom
 * DOMAIN_ADMIN role may grant less (its permissions) and may be disabled, so it never counts as the
 * domain's last admin (docs/decisions/identity.md, "Custom roles").
 */
export const MANAGED_DOMAIN_ADMIN = MANAGED_ROLES.DOMAIN_ADMIN.roleId;

export function managedRole(roleType: RoleType) {
  const r = MANAGED_ROLES[roleType as keyof typeof MANAGED_ROLES];
  if (!r) throw new Error(`no managed role for ${roleType}`);
  return r;
}

/** The managed roles' names: no custom role may take one. */
export const MANAGED_NAMES: Record<CustomRoleType, string> = { DOMAIN_ADMIN: 'Domain Admin', WORKSPACE_OWNER: 'Workspace Owner', WORKSPACE_MEMBER: 'Workspace Member' };

/** The managed roles as rows (the same values `role_view` gives them; role.spec.ts checks both agree). */
export function managedRoleRows(domainId: string): RoleRow[] {
  return (Object.keys(MANAGED_ROLES) as CustomRoleType[]).map((t) => ({
    role_id: MANAGED_ROLES[t].roleId,
    domain_id: domainId,
    name: MANAGED_NAMES[t],
    role_type: t,
    permissions: MANAGED_ROLES[t].permissions,
    page_access: ['*'],
    tags: {},
    state: 'ENABLED',
    is_managed: true,
    created_at: null,
    updated_at: null,
  }));
}

/** The managed role `roleId` as a row of `domainId`; undefined for any other id. */
export const managedRow = (domainId: string, roleId: string) => managedRoleRows(domainId).find((r) => r.role_id === roleId);
