import type { Queryable } from './db';

/**
 * Collected cost rows name the job task that wrote them by one integer, `cost.task_no` (job_task's
 * `task_no`), not by its domain, data source, job and task ids (issue #31, docs/decisions/cost-analysis.md
 * "A narrower cost row"). Every statement that picks cost rows by those ids finds the tasks' numbers in
 * job_task first and then the rows by `task_no = ANY(...)`: an array, so PostgreSQL reads the BRIN index
 * on task_no (one bitmap scan per number) instead of every row of cost.
 */

/** SQL: the task numbers of a job (`$d` its domain, `$j` its id, given as parameter references). */
export const jobTaskNumbers = (d: string, j: string) => `ARRAY(SELECT task_no FROM job_task WHERE domain_id = ${d} AND job_id = ${j})`;

/** SQL: cost rows (`c`) joined to the task that wrote them (`t`: its domain_id, data_source_id, job_id). */
export const COST_WITH_TASK = `cost c JOIN job_task t ON t.task_no = c.task_no`;

/** Deletes the cost rows a job's tasks wrote. */
export async function deleteJobCosts(db: Queryable, domainId: string, jobId: string): Promise<void> {
  await db.query(`DELETE FROM cost WHERE task_no = ANY(${jobTaskNumbers('$1', '$2')})`, [domainId, jobId]);
}

/** Deletes a data source's cost rows; answers the billed months they were in. */
export async function deleteDataSourceCosts(db: Queryable, domainId: string, dataSourceId: string): Promise<string[]> {
  const { rows } = await db.query<{ billed_month: string }>(
    `WITH c AS (DELETE FROM cost WHERE task_no = ANY(ARRAY(SELECT task_no FROM job_task WHERE domain_id = $1 AND data_source_id = $2)) RETURNING billed_month)
     SELECT DISTINCT billed_month FROM c`,
    [domainId, dataSourceId],
  );
  return rows.map((r) => r.billed_month);
}

/** The task numbers of a data source's SUCCESS jobs: the tasks whose rows a new job's rows replace. */
export async function succeededTaskNumbers(db: Queryable, domainId: string, dataSourceId: string): Promise<number[]> {
  const { rows } = await db.query<{ task_no: number }>(
    `SELECT t.task_no FROM job_task t JOIN job j ON j.domain_id = t.domain_id AND j.job_id = t.job_id
     WHERE j.domain_id = $1 AND j.data_source_id = $2 AND j.status = 'SUCCESS'`,
    [domainId, dataSourceId],
  );
  return rows.map((r) => r.task_no);
}
