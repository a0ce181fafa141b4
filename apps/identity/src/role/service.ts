import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { applyOnly, defineResource, listInMemory, resolveOnly, type Query } from '@platform/query';
import { MANAGED_ROLES } from '../token/roles';

const NAMES = { DOMAIN_ADMIN: 'Domain Admin', WORKSPACE_OWNER: 'Workspace Owner', WORKSPACE_MEMBER: 'Workspace Member' } as const;
type ManagedType = keyof typeof MANAGED_ROLES;

const roleResource = defineResource({
  table: 'role',
  idKey: 'role_id',
  keywordKeys: ['role_id', 'name'],
  fields: {
    ...Object.fromEntries(['role_id', 'name', 'role_type', 'state', 'domain_id'].map((k) => [k, { column: k, type: 'string' as const }])),
    permissions: { column: 'permissions', type: 'string_array' },
    is_managed: { column: 'is_managed', type: 'boolean' },
  },
});

export interface RoleListInput {
  query?: Query;
  role_id?: string;
  name?: string;
  role_type?: ManagedType;
  state?: 'ENABLED' | 'DISABLED';
}

/** The managed roles as RoleInfo, in the caller's domain. */
function roles(domainId: string) {
  return (Object.keys(MANAGED_ROLES) as ManagedType[]).map((t) => ({
    role_id: MANAGED_ROLES[t].roleId,
    name: NAMES[t],
    role_type: t,
    permissions: MANAGED_ROLES[t].permissions,
    page_access: ['*'],
    tags: {},
    is_managed: true,
    state: 'ENABLED' as const,
    domain_id: domainId,
    created_at: '',
    updated_at: '',
  }));
}

/** The role a role binding names: a managed role, or ERROR_NOT_FOUND. */
export function findRole(roleId: string) {
  const r = roles('').find((x) => x.role_id === roleId);
  if (!r) throw errors.notFound('role_id', roleId);
  return r;
}

/**
 * Roles (upstream RoleService, read side): the three managed roles. Custom roles are not modelled, so
 * create/update/delete do not exist; every workspace role may read them, as upstream allows.
 */
export class RoleService {
  get(auth: AuthContext, roleId: string) {
    const r = roles(auth.domainId).find((x) => x.role_id === roleId);
    if (!r) throw errors.notFound('role_id', roleId);
    return r;
  }

  list(auth: AuthContext, input: RoleListInput) {
    const rows = roles(auth.domainId).filter(
      (r) =>
        (input.role_id === undefined || r.role_id === input.role_id) &&
        (input.name === undefined || r.name === input.name) &&
        (input.role_type === undefined || r.role_type === input.role_type) &&
        (input.state === undefined || r.state === input.state),
    );
    const { rows: page, total_count } = listInMemory(roleResource, rows, input.query);
    const only = resolveOnly(roleResource, input.query);
    return { results: page.map((r) => applyOnly(r, only)), total_count };
  }
}
