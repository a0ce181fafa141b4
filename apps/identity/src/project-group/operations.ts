import { z } from 'zod';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import { Empty, id, idOperation, mergeErrors, plainName as name, NOT_FOUND, operation, QUERY_ERRORS, request, stringList, tags, statOperation } from '@platform/http';
import { QuerySchema } from '@platform/query';
import type { ProjectGroupService } from './service';
import { ProjectGroupInfo, ProjectGroupsInfo } from './responses';

// Upstream: writes need WORKSPACE_OWNER (a DOMAIN_ADMIN becomes one through a workspace-scoped grant);
// reads are open to DOMAIN_ADMIN, WORKSPACE_OWNER and WORKSPACE_MEMBER (a member sees only their groups).
const write = { permission: 'identity:ProjectGroup.write', roles: ['WORKSPACE_OWNER'] as RoleType[] };
const read = { permission: 'identity:ProjectGroup.read', roles: WORKSPACE_ROLES };
const SUB_GROUP = 'ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP';

export function projectGroupOperations(service: ProjectGroupService) {
  return [
    operation({
      path: '/identity/v2/project-group/create',
      access: write,
      schema: request({ name, tags: tags.optional(), parent_group_id: id.optional() }),
      response: ProjectGroupInfo,
      errors: { 404: ['ERROR_NOT_FOUND'], 409: ['ERROR_ALREADY_EXISTS'] },
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/identity/v2/project-group/update',
      access: write,
      schema: request({ project_group_id: id, name: name.optional(), tags: tags.optional() }),
      response: ProjectGroupInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    operation({
      path: '/identity/v2/project-group/change-parent-group',
      access: write,
      schema: request({ project_group_id: id, parent_group_id: id }),
      response: ProjectGroupInfo,
      errors: mergeErrors(NOT_FOUND, { 400: [SUB_GROUP] }),
      handler: (input, { auth }) => service.changeParentGroup(auth, input),
    }),
    idOperation({
      path: '/identity/v2/project-group/delete',
      access: write,
      id: { project_group_id: id },
      response: Empty,
      errors: mergeErrors(NOT_FOUND, { 400: ['ERROR_RELATED_PROJECT_GROUP_EXIST', 'ERROR_RELATED_PROJECT_EXIST'] }),
      call: (auth, projectGroupId) => service.delete(auth, projectGroupId),
    }),
    operation({
      path: '/identity/v2/project-group/add-users',
      access: write,
      schema: request({ project_group_id: id, users: stringList.min(1) }),
      response: ProjectGroupInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.addUsers(auth, input),
    }),
    operation({
      path: '/identity/v2/project-group/remove-users',
      access: write,
      schema: request({ project_group_id: id, users: stringList.min(1) }),
      response: ProjectGroupInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.removeUsers(auth, input),
    }),
    idOperation({
      path: '/identity/v2/project-group/get',
      access: read,
      id: { project_group_id: id },
      response: ProjectGroupInfo,
      call: (auth, groupId) => service.get(auth, groupId),
    }),
    operation({
      path: '/identity/v2/project-group/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        project_group_id: z.string().optional(),
        name: z.string().optional(),
        workspace_id: z.string().optional(),
        parent_group_id: z.string().optional(),
      }),
      response: ProjectGroupsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/identity/v2/project-group/stat', read, service),
  ];
}
