import { z } from 'zod';
import { id, idOperation, mergeErrors, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, stringList } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { ADMIN_AND_OWNER } from '../scope';
import type { JobService } from './service';
import { JobInfo, JobsInfo } from './responses';

const read = { permission: 'cost-analysis:Job.read', roles: ADMIN_AND_OWNER };
const write = { permission: 'cost-analysis:Job.write', roles: ADMIN_AND_OWNER };
const JOB_STATUS = z.enum(['IN_PROGRESS', 'SUCCESS', 'FAILURE', 'TIMEOUT', 'CANCELED']);

export function jobOperations(service: JobService) {
  return [
    idOperation({
      path: '/cost-analysis/v1/job/cancel',
      access: write,
      id: { job_id: id },
      response: JobInfo,
      errors: mergeErrors(NOT_FOUND, { 400: ['ERROR_JOB_STATE'] }),
      call: (auth, jobId) => service.cancel(auth, jobId),
    }),
    idOperation({
      path: '/cost-analysis/v1/job/get',
      access: read,
      id: { job_id: id },
      fields: { only: stringList.optional() },
      response: JobInfo,
      call: (auth, jobId, { only }) => service.get(auth, jobId, only),
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
      response: JobsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/cost-analysis/v1/job/stat', read, service),
  ];
}
