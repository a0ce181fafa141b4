import type { Pool } from 'pg';
import type { PoolClient, ReadRunner } from '@platform/db';
import { deleteJobCosts } from '../cost-rows';

/** A `job` row as stored: one sync of a data source. */
export interface JobRow {
  domain_id: string;
  job_id: string;
  workspace_id: string;
  resource_group: string;
  data_source_id: string;
  status: string;
  options: unknown;
  error_code: string;
  error_message: string;
  total_tasks: number;
  remained_tasks: number;
  changed: unknown;
  synced_accounts?: unknown;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

/** Every read and write of the `job` table by the job resource (a sync creates jobs: data-source/sync.ts). */
export class JobRepository {
  constructor(private readonly pool: Pool) {}

  /** The job by id in the domain, on `db` (the primary for a write, the read router for a get). */
  async find(domainId: string, jobId: string, db: ReadRunner = this.pool): Promise<JobRow | undefined> {
    const { rows } = await db.query<JobRow>(`SELECT * FROM job WHERE domain_id = $1 AND job_id = $2`, [domainId, jobId]);
    return rows[0];
  }

  /** Marks the job CANCELED if it is still IN_PROGRESS; undefined when it was not. */
  async cancelInProgress(client: PoolClient, job: JobRow): Promise<JobRow | undefined> {
    const { rows } = await client.query<JobRow>(
      `UPDATE job SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND job_id = $2 AND status = 'IN_PROGRESS' RETURNING *`,
      [job.domain_id, job.job_id],
    );
    return rows[0];
  }

  /** Marks the job's unfinished tasks CANCELED; answers their ids. */
  async cancelOpenTasks(client: PoolClient, job: JobRow): Promise<string[]> {
    const { rows } = await client.query<{ job_task_id: string }>(
      `UPDATE job_task SET status = 'CANCELED', finished_at = now(), updated_at = now()
       WHERE domain_id = $1 AND job_id = $2 AND status IN ('PENDING', 'IN_PROGRESS') RETURNING job_task_id`,
      [job.domain_id, job.job_id],
    );
    return rows.map((r) => r.job_task_id);
  }

  /** Removes the cost rows the job's finished tasks wrote. */
  async deleteCostsOf(client: PoolClient, job: JobRow): Promise<void> {
    await deleteJobCosts(client, job.domain_id, job.job_id);
  }
}
