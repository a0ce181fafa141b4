import { z } from 'zod';
import { Empty, id, idOperation, NOT_FOUND, operation, plainName as name, QUERY_ERRORS, request, statOperation, stringList, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import type { ProjectService } from './service';
import { ProjectInfo, ProjectsInfo } from './responses';

// Writes: WORKSPACE_OWNER in their workspace (a DOMAIN_ADMIN through a workspace-scoped grant). Reads:
// every workspace role; a member sees the projects they belong to.
const write = { permission: 'identity:Project.write', roles: ['WORKSPACE_OWNER'] as RoleType[] };
const read = { permission: 'identity:Project.read', roles: WORKSPACE_ROLES };
const projectId = id.describe('The project.');
const projectType = z.enum(['PRIVATE', 'PUBLIC']);

export function projectOperations(service: ProjectService) {
  return [
    operation({
      path: '/identity/v2/project/create',
      access: write,
      summary: 'Create a project in the token\'s workspace, optionally in a project group',
      schema: request({
        name: name.describe('Display name.'),
        project_type: projectType.optional().describe('PRIVATE (default): its users and its groups\' users see it; PUBLIC: every member of the workspace does.'),
        tags: tags.optional().describe('Free-form labels.'),
        project_group_id: id.optional().describe('A project group of the same workspace.'),
      }),
      response: ProjectInfo,
      errors: { 404: ['ERROR_NOT_FOUND'], 409: ['ERROR_ALREADY_EXISTS'] },
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/identity/v2/project/update',
      access: write,
      summary: 'Rename a project or replace its tags',
      schema: request({ project_id: projectId, name: name.optional().describe('New display name.'), tags: tags.optional().describe('New labels (replace the old ones).') }),
      response: ProjectInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    operation({
      path: '/identity/v2/project/update-project-type',
      access: write,
      summary: 'Make a project PRIVATE or PUBLIC (PUBLIC: every member of the workspace sees it)',
      schema: request({ project_id: projectId, project_type: projectType.describe('PRIVATE or PUBLIC.') }),
      response: ProjectInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.updateProjectType(auth, input),
    }),
    operation({
      path: '/identity/v2/project/change-project-group',
      access: write,
      summary: 'Move a project to another project group of its workspace',
      schema: request({ project_id: projectId, project_group_id: id.describe('The new project group (same workspace).') }),
      response: ProjectInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.changeProjectGroup(auth, input),
    }),
    idOperation({
      path: '/identity/v2/project/delete',
      access: write,
      summary: 'Delete a project',
      id: { project_id: projectId },
      response: Empty,
      call: (auth, project) => service.delete(auth, project),
    }),
    operation({
      path: '/identity/v2/project/add-users',
      access: write,
      summary: 'Add workspace users to a project: they see it and its resources in every module',
      schema: request({ project_id: projectId, users: stringList.min(1).describe('User ids; each needs a role in the workspace (or DOMAIN_ADMIN).') }),
      response: ProjectInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.addUsers(auth, input),
    }),
    operation({
      path: '/identity/v2/project/remove-users',
      access: write,
      summary: 'Remove users from a project',
      schema: request({ project_id: projectId, users: stringList.min(1).describe('User ids (one that is not there is no error).') }),
      response: ProjectInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.removeUsers(auth, input),
    }),
    idOperation({
      path: '/identity/v2/project/get',
      access: read,
      summary: 'One project the caller may see',
      id: { project_id: projectId },
      response: ProjectInfo,
      call: (auth, project) => service.get(auth, project),
    }),
    operation({
      path: '/identity/v2/project/list',
      access: read,
      summary: 'The projects the caller may see, filtered by a query and the fields given',
      schema: request({
        query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
        project_id: z.string().max(255).optional().describe('Only this project.'),
        name: z.string().max(255).optional().describe('Only projects with this name.'),
        project_type: projectType.optional().describe('Only PRIVATE or only PUBLIC projects.'),
        created_by: z.string().max(255).optional().describe('Only projects this user created.'),
        include_children: z.boolean().optional().describe('With project_group_id: also the projects of every group below it.'),
        workspace_id: z.string().max(255).optional().describe('Only projects of this workspace.'),
        project_group_id: z.string().max(255).optional().describe('Only projects of this group.'),
        user_id: z.string().max(255).optional().describe('Only projects whose users include this user.'),
      }),
      response: ProjectsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/identity/v2/project/stat', read, service),
  ];
}
