import { z } from 'zod';
import { id, NOT_FOUND, operation, QUERY_ERRORS, request } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { WORKSPACE_ROLES } from '@platform/auth';
import type { RoleService } from './service';
import { RoleInfo, RolesInfo } from './responses';

const read = { permission: 'identity:Role.read', roles: WORKSPACE_ROLES };

export function roleOperations(service: RoleService) {
  return [
    operation({
      path: '/identity/v2/role/get',
      access: read,
      summary: 'One managed role',
      schema: request({ role_id: id.describe('The role.') }),
      response: RoleInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.get(auth, input.role_id),
    }),
    operation({
      path: '/identity/v2/role/list',
      access: read,
      summary: 'The managed roles (DOMAIN_ADMIN, WORKSPACE_OWNER, WORKSPACE_MEMBER), filtered by a query and the fields given',
      schema: request({
        query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
        role_id: z.string().max(255).optional().describe('Only this role.'),
        name: z.string().max(255).optional().describe('Only roles with this name.'),
        role_type: z.enum(['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER']).optional().describe('Only roles of this type.'),
        state: z.enum(['ENABLED', 'DISABLED']).optional().describe('Only roles in this state.'),
      }),
      response: RolesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
  ];
}
