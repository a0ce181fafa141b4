import { withTransaction, type ReadRouter, type ReadRunner } from '@platform/db';
import type { Pool } from 'pg';
import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Queue } from '@platform/queue';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { CollectTaskData } from '../collector/queue';
import { canSee, visibility } from '../scope';
import { jobResource, toJobInfo, type JobRow } from './repository';

export class JobService {
  constructor(
    private readonly pool: Pool,
    private readonly queue: Queue<CollectTaskData>,
    private readonly reads: ReadRouter,
  ) {}

  /** The job if the caller may see it: read from `db` (the primary for a write, the read router for a get). */
  private async visible(auth: AuthContext, id: string, db: ReadRunner = this.pool): Promise<JobRow> {
    const { rows } = await db.query<JobRow>(`SELECT * FROM job WHERE domain_id = $1 AND job_id = $2`, [auth.domainId, id]);
    if (!rows[0] || !canSee(auth, rows[0], true)) throw errors.notFound('job_id', id);
    return rows[0];
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
      const { rows } = await client.query<JobRow>(
        `UPDATE job SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND job_id = $2 AND status = 'IN_PROGRESS' RETURNING *`,
        [job.domain_id, job.job_id],
      );
      if (!rows[0]) throw errors.wrongState('ERROR_JOB_STATE', `Job ${id} is ${job.status}; only an IN_PROGRESS job can be canceled. (job_state = ${job.status})`);
      const t = await client.query<{ job_task_id: string }>(
        `UPDATE job_task SET status = 'CANCELED', finished_at = now(), updated_at = now()
         WHERE domain_id = $1 AND job_id = $2 AND status IN ('PENDING', 'IN_PROGRESS') RETURNING job_task_id`,
        [job.domain_id, job.job_id],
      );
      await client.query(`DELETE FROM cost WHERE domain_id = $1 AND data_source_id = $2 AND job_id = $3`, [job.domain_id, job.data_source_id, job.job_id]);
      return { canceled: rows[0], tasks: t.rows.map((r) => r.job_task_id) };
    });
    // Waiting BullMQ jobs are dropped; a running one cannot be removed and cancels itself.
    await Promise.all(tasks.map((t) => this.queue.remove(t).catch(() => 0)));
    return toJobInfo(canceled);
  }
}
