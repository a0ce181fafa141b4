import { z } from 'zod';
import { WORKSPACE_ROLES } from '@platform/auth';
import { operation, QUERY_ERRORS, request, statOperation } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { EVENT_TYPES } from './responses';
import type { EventService } from './service';
import { OpsflowEventsInfo } from './responses';

// Events are task history in workspaces: DOMAIN_ADMIN reads the whole domain, WORKSPACE_OWNER and
// WORKSPACE_MEMBER read their workspace. USER tokens (no workspace) are refused.
const read = { permission: 'opsflow:Event.read', roles: WORKSPACE_ROLES };

export function eventOperations(service: EventService) {
  return [
    operation({
      path: '/opsflow/v1/event/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        task_id: z.string().optional(),
        event_type: z.enum(EVENT_TYPES).optional(),
        // created_type / created_by: upstream's current names (EventSearchQuery); user_type / user_id still work.
        created_type: z.string().optional(),
        created_by: z.string().optional(),
        user_type: z.string().optional(),
        event_id: z.string().optional(),
        user_id: z.string().optional(),
        workspace_id: z.string().optional(),
        project_id: z.string().optional(),
      }),
      response: OpsflowEventsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/opsflow/v1/event/stat', read, service),
  ];
}
