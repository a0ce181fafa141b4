import type { ReadRunner } from '@platform/db';

/** A `job_task` row as stored: one task of a job (the collector writes them: collector/). */
export interface JobTaskRow {
  domain_id: string;
  job_task_id: string;
  workspace_id: string;
  resource_group: string;
  job_id: string;
  data_source_id: string;
  status: string;
  options: unknown;
  created_count: number;
  changed: unknown;
  error_code: string;
  error_message: string;
  created_at: Date;
  started_at: Date | null;
  updated_at: Date;
  finished_at: Date | null;
}

/** The API's reads of the `job_task` table (list and stat read through fields.ts). */
export class JobTaskRepository {
  /** The task by id in the domain, on the runner given (the read router's choice for the caller). */
  async find(db: ReadRunner, domainId: string, jobTaskId: string): Promise<JobTaskRow | undefined> {
    const { rows } = await db.query<JobTaskRow>(`SELECT * FROM job_task WHERE domain_id = $1 AND job_task_id = $2`, [domainId, jobTaskId]);
    return rows[0];
  }
}
