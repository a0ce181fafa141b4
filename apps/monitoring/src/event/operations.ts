import { z } from 'zod';
import { WORKSPACE_ROLES } from '@platform/auth';
import { Empty, id, idOperation, operation, QUERY_ERRORS, request, statOperation, struct } from '@platform/http';
import { QuerySchema } from '@platform/query';
import type { IngestService } from '../ingest/service';
import type { EventService } from './service';
import { EventInfo, EventsInfo } from './responses';

const read = { permission: 'monitoring:Event.read', roles: WORKSPACE_ROLES };
const filter = z.string().optional();

export function eventOperations(service: EventService, ingest: IngestService) {
  return [
    // Public: authorized by the webhook's access key, like the webhook URL (same checks, same queue).
    operation({
      path: '/monitoring/v1/event/create',
      access: 'public',
      schema: request({ webhook_id: id, access_key: z.string().min(1).max(255), data: struct }),
      response: Empty,
      errors: { 400: ['ERROR_WEBHOOK_STATE_DISABLED'], 403: ['ERROR_PERMISSION_DENIED'] },
      handler: async (input) => {
        const webhook = await ingest.authorize(input.webhook_id, input.access_key);
        await ingest.accept(webhook, input.data, JSON.stringify(input.data).length);
      },
    }),
    idOperation({
      path: '/monitoring/v1/event/get',
      access: read,
      id: { event_id: id },
      response: EventInfo,
      call: (auth, eventId) => service.get(auth, eventId),
    }),
    operation({
      path: '/monitoring/v1/event/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        event_id: filter,
        event_key: filter,
        event_type: filter,
        severity: filter,
        resource: filter,
        provider: filter,
        account: filter,
        workspace_id: filter,
        project_id: filter,
        alert_id: filter,
        webhook_id: filter,
      }),
      response: EventsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/monitoring/v1/event/stat', read, service),
  ];
}
