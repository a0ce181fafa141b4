import { z } from 'zod';
import { Empty, id, idOperation, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { ALL_ROLES, PERMISSION_PATTERN, WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import type { RoleService } from './service';
import { BasicRolesInfo, RoleInfo, RolesInfo } from './responses';

// Upstream (identity RoleService): DOMAIN_ADMIN writes; every workspace role reads; list-basic-role is
// for any authenticated user (role_types ["USER"] in upstream's handler means every user).
const write = { permission: 'identity:Role.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'identity:Role.read', roles: WORKSPACE_ROLES };
const basicRead = { permission: 'identity:Role.read', roles: ALL_ROLES };

const roleId = id.describe('The role.');
const roleType = z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']);
const permissions = z
  .array(
    z
      .string()
      .max(255)
      .regex(PERMISSION_PATTERN, 'a permission is `*` or `<service>:` followed by a resource and verb prefix, e.g. inventory:CloudService.read')
      .describe('A permission prefix: `inventory:` covers every inventory operation, `inventory:CloudService.read` that one.'),
  )
  .max(200)
  .describe('What the role\'s holders may call, within their role type (an empty list: everything their role type allows).');
const pageAccess = z
  .array(z.string().trim().min(1).max(255).describe('A console page pattern (`*`: all, `my_page.*`).'))
  .max(200)
  .describe('Console pages the role opens; kept for the console, not checked by the API.');
const MANAGED = { 403: ['ERROR_PERMISSION_DENIED'] };

const listFilters = {
  query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
  role_id: z.string().max(255).optional().describe('Only this role.'),
  name: z.string().max(255).optional().describe('Only roles with this name.'),
  role_type: roleType.optional().describe('Only roles of this type.'),
  state: z.enum(['ENABLED', 'DISABLED']).optional().describe('Only roles in this state.'),
};

export function roleOperations(service: RoleService) {
  return [
    operation({
      path: '/identity/v2/role/create',
      access: write,
      summary: 'Create a custom role of the caller\'s domain (a generated `role-…` id)',
      schema: request({
        name: name.describe('Display name, unique in the domain.'),
        role_type: roleType.describe('The role type the role binds as: DOMAIN_ADMIN (resource group DOMAIN) or a workspace role (WORKSPACE).'),
        permissions: permissions.optional(),
        page_access: pageAccess.optional(),
        tags: tags.optional().describe('Free-form labels.'),
      }),
      response: RoleInfo,
      errors: { 409: ['ERROR_ALREADY_EXISTS'] },
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/identity/v2/role/update',
      access: write,
      summary: 'Rename a custom role or replace its permissions, page access or tags; new permissions end the tokens granted with the old ones',
      schema: request({
        role_id: roleId,
        name: name.optional().describe('New display name, unique in the domain.'),
        permissions: permissions.optional(),
        page_access: pageAccess.optional(),
        tags: tags.optional().describe('New labels (replace the old ones).'),
      }),
      response: RoleInfo,
      errors: { ...NOT_FOUND, ...MANAGED, 409: ['ERROR_ALREADY_EXISTS'] },
      handler: (input, { auth }) => service.update(auth, input),
    }),
    idOperation({
      path: '/identity/v2/role/enable',
      access: write,
      summary: 'Enable a custom role: tokens can be granted with it again',
      id: { role_id: roleId },
      response: RoleInfo,
      errors: { ...NOT_FOUND, ...MANAGED },
      call: (auth, role) => service.enable(auth, role),
    }),
    idOperation({
      path: '/identity/v2/role/disable',
      access: write,
      summary: 'Disable a custom role: no token is granted with it, and the ones granted stop working at once in every module',
      id: { role_id: roleId },
      response: RoleInfo,
      errors: { ...NOT_FOUND, ...MANAGED },
      call: (auth, role) => service.disable(auth, role),
    }),
    idOperation({
      path: '/identity/v2/role/delete',
      access: write,
      summary: 'Delete a custom role that no role binding names',
      id: { role_id: roleId },
      response: Empty,
      errors: { ...NOT_FOUND, ...MANAGED, 409: ['ERROR_ROLE_IN_USED_AT_ROLE_BINDING'] },
      call: (auth, role) => service.delete(auth, role),
    }),
    idOperation({
      path: '/identity/v2/role/get',
      access: read,
      summary: 'One role: a managed role or a custom role of the caller\'s domain',
      id: { role_id: roleId },
      response: RoleInfo,
      call: (auth, role) => service.get(auth, role),
    }),
    operation({
      path: '/identity/v2/role/list',
      access: read,
      summary: 'The managed roles and the domain\'s custom roles, filtered by a query and the fields given',
      schema: request(listFilters),
      response: RolesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    operation({
      path: '/identity/v2/role/list-basic-role',
      access: basicRead,
      summary: 'The roles of the caller\'s domain without their permissions, for any signed-in user (upstream\'s BasicRoleInfo)',
      schema: request(listFilters),
      response: BasicRolesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.listBasic(auth, input),
    }),
    statOperation('/identity/v2/role/stat', read, service),
  ];
}
