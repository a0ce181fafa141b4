import { z } from 'zod';
import { listOf } from '@platform/http';

/** EndpointInfo (the contract) plus `internal_endpoint`, the address inside the deployment. */
export const EndpointInfo = z
  .strictObject({
    service: z.string(),
    name: z.string(),
    endpoint: z.string(),
    internal_endpoint: z.string(),
    state: z.enum(['ACTIVE', 'INACTIVE']),
    version: z.string(),
  })
  .meta({ id: 'EndpointInfo' });

export const EndpointsInfo = listOf(EndpointInfo).meta({ id: 'EndpointsInfo' });
