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

/**
 * Who may call an operation: the role types allowed and the permission needed (upstream's pair). An
 * empty `permission` is an operation upstream declares without one (`@transaction()`, e.g.
 * endpoint/list): any token of the role types passes, whatever permissions it carries.
 */
export interface Access {
  permission: string;
  roles: readonly RoleType[];
}

export const ALL_ROLES: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER', 'USER'];
export const WORKSPACE_ROLES: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER'];
export const WORKSPACE_WRITERS: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER'];

/**
 * Whether a granted permission covers the one an operation needs, as upstream's authorization handler
 * reads it (python-core `_check_permissions`): the needed permission starts with the granted one, so
 * `inventory:` covers `inventory:CloudService.read` and `identity:ProjectGroup` covers
 * `identity:ProjectGroup.write`. `*` covers everything, and a trailing `*` (`identity:*`) reads as the
 * prefix before it. An empty granted string covers nothing (roles refuse one; a token never holds one).
 */
export function permissionMatches(granted: string, required: string): boolean {
  if (granted === '*' || granted === required) return true;
  const prefix = granted.endsWith('*') ? granted.slice(0, -1) : granted;
  return prefix.length > 0 && required.startsWith(prefix);
}

/** The shape of a permission a role may grant: `*`, or `<service>:` followed by a resource/verb prefix (`inventory:CloudService.read`). */
export const PERMISSION_PATTERN = /^(?:\*|[a-z][a-z0-9-]{0,63}:[A-Za-z0-9.]{0,190}\*?)$/;

export function isAllowed(ctx: AuthContext, access: Access): boolean {
  if (!access.roles.includes(ctx.roleType)) return false;
  if (access.permission === '') return true;
  return ctx.permissions.some((p) => permissionMatches(p, access.permission));
}
