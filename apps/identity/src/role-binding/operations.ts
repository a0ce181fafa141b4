import { z } from 'zod';
import { Empty, id, idOperation, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import type { RoleBindingService } from './service';
import { RoleBindingInfo, RoleBindingsInfo } from './responses';

// Upstream: DOMAIN_ADMIN and WORKSPACE_OWNER write (an owner in their workspace only); every workspace role reads.
const write = { permission: 'identity:RoleBinding.write', roles: ['DOMAIN_ADMIN', 'WORKSPACE_OWNER'] as RoleType[] };
const read = { permission: 'identity:RoleBinding.read', roles: WORKSPACE_ROLES };
const bindingId = id.describe('The role binding.');
const RULES = ['ERROR_NOT_ALLOWED_ROLE_TYPE', 'ERROR_NOT_ALLOWED_TO_UPDATE_OR_DELETE_ROLE_BY_SELF'];

export function roleBindingOperations(service: RoleBindingService) {
  return [
    operation({
      path: '/identity/v2/role-binding/create',
      access: write,
      summary: 'Give a user a role: DOMAIN_ADMIN over the domain, or a workspace role in one workspace',
      schema: request({
        user_id: id.describe('The user who gets the role.'),
        role_id: id.describe('The role: managed-domain-admin, managed-workspace-owner, managed-workspace-member, or a custom role of the domain whose role type fits the resource group.'),
        resource_group: z.enum(['DOMAIN', 'WORKSPACE']).describe('DOMAIN for DOMAIN_ADMIN, WORKSPACE for a workspace role.'),
        workspace_id: id.optional().describe('The workspace of a WORKSPACE binding (a workspace owner\'s own by default).'),
      }),
      response: RoleBindingInfo,
      errors: { 404: ['ERROR_NOT_FOUND'], 400: ['ERROR_NOT_ALLOWED_ROLE_TYPE', 'ERROR_DUPLICATED_ROLE_BINDING', 'ERROR_DUPLICATED_WORKSPACE_ROLE_BINDING'] },
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/identity/v2/role-binding/update-role',
      access: write,
      summary: 'Change the role of a binding (within its resource group); the user\'s tokens stop working and they grant again',
      schema: request({ role_binding_id: bindingId, role_id: id.describe('The new role (managed, or a custom role of the domain), of a role type that fits the binding\'s resource group.') }),
      response: RoleBindingInfo,
      errors: { ...NOT_FOUND, 400: [...RULES, 'ERROR_LAST_DOMAIN_ADMIN_CANNOT_DELETE'] },
      handler: (input, { auth }) => service.updateRole(auth, input),
    }),
    idOperation({
      path: '/identity/v2/role-binding/delete',
      access: write,
      summary: 'Take a role away: the user\'s tokens stop working and they leave the workspace\'s projects',
      id: { role_binding_id: bindingId },
      response: Empty,
      errors: { ...NOT_FOUND, 400: [...RULES, 'ERROR_LAST_DOMAIN_ADMIN_CANNOT_DELETE'] },
      call: (auth, roleBindingId) => service.delete(auth, roleBindingId),
    }),
    idOperation({
      path: '/identity/v2/role-binding/get',
      access: read,
      summary: 'One role binding (a workspace token sees its workspace\'s bindings only)',
      id: { role_binding_id: bindingId },
      response: RoleBindingInfo,
      call: (auth, roleBindingId) => service.get(auth, roleBindingId),
    }),
    operation({
      path: '/identity/v2/role-binding/list',
      access: read,
      summary: 'Role bindings of the domain (DOMAIN_ADMIN) or of the token\'s workspace, filtered by a query and the fields given',
      schema: request({
        query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
        role_binding_id: z.string().max(255).optional().describe('Only this binding.'),
        role_type: z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']).optional().describe('Only bindings of this role type.'),
        workspace_id: z.string().max(255).optional().describe('Only bindings in this workspace.'),
        role_id: z.string().max(255).optional().describe('Only bindings of this role.'),
        user_id: z.string().max(255).optional().describe('Only bindings of this user.'),
      }),
      response: RoleBindingsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/identity/v2/role-binding/stat', read, service),
  ];
}
