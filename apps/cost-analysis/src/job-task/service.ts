import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { ReadRouter } from '@platform/db';
import { canSee, visibility } from '../scope';
import { jobTaskResource } from './fields';
import { JobTaskRepository, type JobTaskRow } from './repository';
import { toJobTaskInfo } from './responses';

export interface JobTaskListInput {
  query?: Query;
  job_task_id?: string;
  status?: string;
  workspace_id?: string;
  job_id?: string;
  data_source_id?: string;
}

export class JobTaskService {
  private readonly repository = new JobTaskRepository();

  constructor(private readonly reads: ReadRouter) {}

  async get(auth: AuthContext, id: string) {
    const row = await this.repository.find(this.reads.for(auth), auth.domainId, id);
    if (!row || !canSee(auth, row, true)) throw errors.notFound('job_task_id', id);
    return toJobTaskInfo(row);
  }

  async list(auth: AuthContext, input: JobTaskListInput) {
    const scope = [...visibility(auth, true), ...eqConditions(input, ['job_task_id', 'status', 'workspace_id', 'job_id', 'data_source_id'])];
    const { rows, total_count } = await runList(this.reads.for(auth), jobTaskResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toJobTaskInfo(r as JobTaskRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.reads.for(auth), jobTaskResource, query, visibility(auth, true));
  }
}
