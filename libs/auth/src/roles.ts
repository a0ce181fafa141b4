/** Role types as upstream (Cloudforet identity v2) has them. */
export const ROLE_TYPES = ['SYSTEM_ADMIN', 'DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER', 'USER'] as const;
export type RoleType = (typeof ROLE_TYPES)[number];

export const SCOPES = ['SYSTEM', 'DOMAIN', 'WORKSPACE', 'PROJECT', 'USER'] as const;
export type Scope = (typeof SCOPES)[number];

/** The caller, as the verified access token tells it. */
export interface AuthContext {
  userId: string;
  domainId: string;
  workspaceId: string;
  roleType: RoleType;
  roleId: string;
  scope: Scope;
  permissions: string[];
  userType: 'USER' | 'APP';
}

/** Who may call an operation: the role types allowed and the permission needed (upstream's pair). */
export interface Access {
  permission: string;
  roles: readonly RoleType[];
}

export const ALL_ROLES: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER', 'USER'];
export const WORKSPACE_ROLES: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER'];
export const WORKSPACE_WRITERS: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER'];

/** `identity:ProjectGroup.write` matches `*`, `identity:*`, `identity:ProjectGroup.*` or itself. */
export function permissionMatches(granted: string, required: string): boolean {
  if (granted === '*' || granted === required) return true;
  if (!granted.endsWith('*')) return false;
  return required.startsWith(granted.slice(0, -1));
}

export function isAllowed(ctx: AuthContext, access: Access): boolean {
  if (!access.roles.includes(ctx.roleType)) return false;
  return ctx.permissions.some((p) => permissionMatches(p, access.permission));
}
