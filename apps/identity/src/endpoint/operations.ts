import { z } from 'zod';
import { ALL_ROLES } from '@platform/auth';
import { operation, QUERY_ERRORS, request } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { listEndpoints, type EndpointConfig } from './service';
import { EndpointsInfo } from './responses';

export function endpointOperations(config: EndpointConfig) {
  return [
    operation({
      path: '/identity/v1/endpoint/list',
      // Upstream's EndpointService.list is `@transaction()`: no permission, so a custom role of any permissions lists endpoints.
      access: { permission: '', roles: ALL_ROLES },
      schema: request({
        query: QuerySchema.optional(),
        service: z.string().max(64).optional(),
        // A free string, as upstream's: public / internal in any case choose the address answered; upstream
        // ignores any other value, and so do we (docs/decisions/api.md, "Free strings").
        endpoint_type: z
          .string()
          .max(64)
          .optional()
          .describe('Which address to answer: `public` (the default) or `internal`, in any case; any other value is ignored.'),
      }),
      response: EndpointsInfo,
      errors: QUERY_ERRORS,
      handler: (input) => listEndpoints(config, input),
    }),
  ];
}
