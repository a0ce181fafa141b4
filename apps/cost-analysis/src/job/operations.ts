import { z } from 'zod';
import { id, operation, request, stringList, statOperation } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { ADMIN_AND_OWNER } from '../scope';
import type { JobService } from './service';

const read = { permission: 'cost-analysis:Job.read', roles: ADMIN_AND_OWNER };
const write = { permission: 'cost-analysis:Job.write', roles: ADMIN_AND_OWNER };
const JOB_STATUS = z.enum(['IN_PROGRESS', 'SUCCESS', 'FAILURE', 'TIMEOUT', 'CANCELED']);

export function jobOperations(service: JobService) {
  return [
    operation({
      path: '/cost-analysis/v1/job/cancel',
      access: write,
      schema: request({ job_id: id }),
      handler: (input, { auth }) => service.cancel(auth, input.job_id),
    }),
    operation({
      path: '/cost-analysis/v1/job/get',
      access: read,
      schema: request({ job_id: id, only: stringList.optional() }),
      handler: (input, { auth }) => service.get(auth, input.job_id, input.only),
    }),
    operation({
      path: '/cost-analysis/v1/job/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        job_id: z.string().optional(),
        status: JOB_STATUS.optional(),
        workspace_id: z.string().optional(), // upstream's JobQuery has it
        data_source_id: z.string().optional(),
      }),
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/cost-analysis/v1/job/stat', read, service),
  ];
}
