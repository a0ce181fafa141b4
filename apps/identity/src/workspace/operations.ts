import { z } from 'zod';
import { Empty, id, idOperation, plainName as name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import type { RoleType } from '@platform/auth';
import type { WorkspaceService } from './service';
import { WorkspaceInfo, WorkspacesInfo } from './responses';

// Upstream: every workspace operation is DOMAIN_ADMIN's (a domain-scoped token).
const write = { permission: 'identity:Workspace.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'identity:Workspace.read', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const workspaceId = id.describe('The workspace.');

export function workspaceOperations(service: WorkspaceService) {
  return [
    operation({
      path: '/identity/v2/workspace/create',
      access: write,
      summary: 'Create a workspace in the caller\'s domain (a generated `workspace-…` id)',
      schema: request({ name: name.describe('Display name.'), tags: tags.optional().describe('Free-form labels.') }),
      response: WorkspaceInfo,
      errors: { 409: ['ERROR_ALREADY_EXISTS'] },
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/identity/v2/workspace/update',
      access: write,
      summary: 'Rename a workspace or replace its tags',
      schema: request({ workspace_id: workspaceId, name: name.optional().describe('New display name.'), tags: tags.optional().describe('New labels (replace the old ones).') }),
      response: WorkspaceInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    idOperation({
      path: '/identity/v2/workspace/delete',
      access: write,
      summary: 'Delete a workspace with its role bindings, projects and project groups; its tokens stop working',
      id: { workspace_id: workspaceId },
      fields: { force: z.boolean().optional().describe('Accepted for upstream clients; deletion always removes identity\'s records in the workspace.') },
      response: Empty,
      call: (auth, workspace) => service.delete(auth, workspace),
    }),
    idOperation({
      path: '/identity/v2/workspace/enable',
      access: write,
      summary: 'Enable a workspace: tokens can be granted for it again',
      id: { workspace_id: workspaceId },
      response: WorkspaceInfo,
      call: (auth, workspace) => service.enable(auth, workspace),
    }),
    idOperation({
      path: '/identity/v2/workspace/disable',
      access: write,
      summary: 'Disable a workspace: no token is granted for it and the ones issued stop working at once',
      id: { workspace_id: workspaceId },
      response: WorkspaceInfo,
      call: (auth, workspace) => service.disable(auth, workspace),
    }),
    idOperation({
      path: '/identity/v2/workspace/get',
      access: read,
      summary: 'One workspace of the caller\'s domain',
      id: { workspace_id: workspaceId },
      response: WorkspaceInfo,
      call: (auth, workspace) => service.get(auth, workspace),
    }),
    operation({
      path: '/identity/v2/workspace/list',
      access: read,
      summary: 'The workspaces of the caller\'s domain, filtered by a query and by the fields given',
      schema: request({
        query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
        workspace_id: z.string().max(255).optional().describe('Only this workspace.'),
        name: z.string().max(255).optional().describe('Only workspaces with this name.'),
        state: z.enum(['ENABLED', 'DISABLED']).optional().describe('Only workspaces in this state.'),
        created_by: z.string().max(255).optional().describe('Only workspaces this user created.'),
        is_managed: z.boolean().optional().describe('Only managed (true) workspaces.'),
        is_dormant: z.boolean().optional().describe('Only dormant (true) workspaces: none, dormancy is not modelled.'),
        workspace_group_id: z.string().max(255).optional().describe('Only workspaces of this group: none, groups are not modelled.'),
      }),
      response: WorkspacesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/identity/v2/workspace/stat', read, service),
  ];
}

