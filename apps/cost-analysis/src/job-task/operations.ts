import { z } from 'zod';
import { id, idOperation, operation, QUERY_ERRORS, request, statOperation } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { ADMIN_AND_OWNER } from '../scope';
import type { JobTaskService } from './service';
import { JobTaskInfo, JobTasksInfo } from './responses';

const read = { permission: 'cost-analysis:JobTask.read', roles: ADMIN_AND_OWNER };
/** upstream's JobTaskQuery.Status (its zero value SCOPE_NONE reads as not set). */
export const TASK_STATUS = z.enum(['PENDING', 'IN_PROGRESS', 'SUCCESS', 'FAILURE', 'TIMEOUT', 'CANCELED']);

export function jobTaskOperations(service: JobTaskService) {
  return [
    idOperation({
      path: '/cost-analysis/v1/job-task/get',
      access: read,
      id: { job_task_id: id },
      response: JobTaskInfo,
      call: (auth, jobTaskId) => service.get(auth, jobTaskId),
    }),
    operation({
      path: '/cost-analysis/v1/job-task/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        job_task_id: z.string().optional(),
        status: TASK_STATUS.optional(),
        workspace_id: z.string().optional(),
        job_id: z.string().optional(),
        data_source_id: z.string().optional(),
      }),
      response: JobTasksInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/cost-analysis/v1/job-task/stat', read, service),
  ];
}
