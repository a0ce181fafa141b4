import { withTransaction, type ReadRouter, type ReadRunner } from '@platform/db';
import type { Pool } from 'pg';
import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Queue } from '@platform/queue';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { CollectTaskData } from '../collector/queue';
import { canSee, visibility } from '../scope';
import { jobResource } from './fields';
import { JobRepository, type JobRow } from './repository';
import { toJobInfo } from './responses';

export class JobService {
  private readonly repository: JobRepository;

  constructor(
    private readonly pool: Pool,
    private readonly queue: Queue<CollectTaskData>,
    private readonly reads: ReadRouter,
  ) {
    this.repository = new JobRepository(pool);
  }

  /** The job if the caller may see it: read from `db` (the primary for a write, the read router for a get). */
  private async visible(auth: AuthContext, id: string, db: ReadRunner = this.pool): Promise<JobRow> {
    const row = await this.repository.find(auth.domainId, id, db);
    if (!row || !canSee(auth, row, true)) throw errors.notFound('job_id', id);
    return row;
  }

  async get(auth: AuthContext, id: string, only?: string[]) {
    return applyOnly(toJobInfo(await this.visible(auth, id, this.reads.for(auth))), only);
  }

  async list(auth: AuthContext, input: { query?: Query; job_id?: string; status?: string; workspace_id?: string; data_source_id?: string }) {
    const scope = [...visibility(auth, true), ...eqConditions(input, ['job_id', 'status', 'workspace_id', 'data_source_id'])];
    const { rows, total_count } = await runList(this.reads.for(auth), jobResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toJobInfo(r as JobRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.reads.for(auth), jobResource, query, visibility(auth, true));
  }

  /**
   * upstream: only an IN_PROGRESS job can be canceled. Its unfinished tasks become CANCELED (a running
   * one stops at its next checkpoint and rolls back), rows its finished tasks wrote are removed, and the
   * data the job would have replaced stays as it was.
   */
  async cancel(auth: AuthContext, id: string) {
    const job = await this.visible(auth, id);
    if (auth.scope === 'WORKSPACE' && job.workspace_id !== auth.workspaceId) throw errors.permissionDenied('A workspace owner cannot cancel a domain job.');
    const { canceled, tasks } = await withTransaction(this.pool, async (client) => {
      const canceled = await this.repository.cancelInProgress(client, job);
      if (!canceled) throw errors.wrongState('ERROR_JOB_STATE', `Job ${id} is ${job.status}; only an IN_PROGRESS job can be canceled. (job_state = ${job.status})`);
      const tasks = await this.repository.cancelOpenTasks(client, job);
      await this.repository.deleteCostsOf(client, job);
      return { canceled, tasks };
    });
    // Waiting BullMQ jobs are dropped; a running one cannot be removed and cancels itself.
    await Promise.all(tasks.map((t) => this.queue.remove(t).catch(() => 0)));
    return toJobInfo(canceled);
  }
}
