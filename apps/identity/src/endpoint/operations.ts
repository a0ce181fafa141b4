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
      access: { permission: 'identity:Endpoint.read', roles: ALL_ROLES },
      schema: request({
        query: QuerySchema.optional(),
        service: z.string().max(64).optional(),
        // upstream's EndpointType is PUBLIC / INTERNAL (NONE = not set); our answers say public / internal
        endpoint_type: z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(['public', 'internal'])).optional(),
      }),
      response: EndpointsInfo,
      errors: QUERY_ERRORS,
      handler: (input) => listEndpoints(config, input),
    }),
  ];
}
