import { withTransaction } from '@platform/db';
import type { Pool, PoolClient } from 'pg';
import type { Logger } from '@platform/core';
import type { DirectoryClient } from '@platform/directory';
import { isApiError, type ApiError } from '@platform/errors';
import { isOutboundRefused } from '@platform/net';
import type { Queue } from '@platform/queue';
import type { CostAnalysisConfig } from '../config';
import type { Queryable } from '../db';
import { DOMAIN_WORKSPACE } from '../scope';
import type { PluginRegistry } from '../plugin/registry';
import { PluginError, type ChangedInfo, type CostRecord, type RowError } from '../plugin/types';
import { lockDomainUnifiedCosts, rebuildUnifiedCosts } from '../unified-cost/builder';
import { openDataSourceSecret } from '../data-source/secret';
import { ensureMonthPartitions, monthsWithPartition } from '../partitions';
import { deleteJobCosts, succeededTaskNumbers } from '../cost-rows';
import { CopyIn, CopyValueError, copyJson, copyText } from './pg-copy';
import type { CollectTaskData } from './queue';
import { dateRange } from './changed-range';
import { copyDataError, TaskCanceled, TaskFailure, tooManyTagKeys } from './task-errors';

export interface CollectorDeps {
  config: CostAnalysisConfig;
  logger: Logger;
  pool: Pool;
  directory: DirectoryClient;
  plugins: PluginRegistry;
  queue: Queue<CollectTaskData>;
}

/** A plugin's transient failure (libs/plugin marks 503s `retryable`), or our own 503. */
const isRetryable = (e: ApiError) => e.status === 503 || (e.details as { retryable?: boolean } | undefined)?.retryable === true;

const FINAL = new Set(['SUCCESS', 'FAILURE', 'CANCELED']);
const COST_COLUMNS = [
  'task_no', 'billed_date', 'cost', 'usage_quantity', 'billed_month', 'workspace_id', 'project_id', 'service_account_id', 'account',
  'provider', 'region_code', 'region_key', 'product', 'usage_type', 'usage_unit', 'currency', 'tags', 'additional_info',
];
/** Cost columns a plugin's `changed.filter` may name. */
const FILTERABLE = new Set(['account', 'provider', 'region_code', 'product', 'project_id', 'service_account_id']);
const MAX_REPORTED_ROWS = 20;
const PROGRESS_MS = 1000;
/** A task IN_PROGRESS this long past TASK_TIMEOUT_SECONDS is failed by the sweep. */
const STUCK_GRACE_SECONDS = 60;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

interface TaskRow {
  domain_id: string;
  job_task_id: string;
  job_id: string;
  data_source_id: string;
  workspace_id: string;
  /** The number the task's cost rows carry (cost.task_no). */
  task_no: number;
  status: string;
  options: Record<string, unknown>;
}

/**
 * Runs collection tasks: one BullMQ job per JobTask. A task streams its plugin's data into `cost` with
 * COPY inside one transaction that also marks the task SUCCESS and counts it off its job, so a task
 * killed mid-way leaves nothing behind and its retry starts clean. The task that completes a job also
 * replaces the data source's earlier cost rows of the months the job collected (or the ranges its plugin
 * declared changed) and rebuilds the domain's unified costs of those months, in the same transaction.
 */
export class Collector {
  constructor(private readonly deps: CollectorDeps) {}

  private async task(db: Queryable, domainId: string, taskId: string): Promise<TaskRow | undefined> {
    const { rows } = await db.query<TaskRow>(`SELECT * FROM job_task WHERE domain_id = $1 AND job_task_id = $2`, [domainId, taskId]);
    return rows[0];
  }

  private async jobStatus(db: Queryable, domainId: string, jobId: string): Promise<string | undefined> {
    const { rows } = await db.query(`SELECT status FROM job WHERE domain_id = $1 AND job_id = $2`, [domainId, jobId]);
    return rows[0]?.status;
  }

  private async markCanceled(t: TaskRow) {
    await this.deps.pool.query(
      `UPDATE job_task SET status = 'CANCELED', finished_at = now(), updated_at = now()
       WHERE domain_id = $1 AND job_task_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
      [t.domain_id, t.job_task_id],
    );
  }

  /**
   * A task failed for good: the task is FAILURE with the error, its job FAILURE (upstream's
   * ERROR_JOB_TASK), and the rows the job's other tasks already wrote are removed, so a failed job
   * never changes the data. Idempotent.
   */
  async failTask(domainId: string, taskId: string, code: string, message: string) {
    await withTransaction(this.deps.pool, async (client) => {
      const { rows } = await client.query<TaskRow>(
        `UPDATE job_task SET status = 'FAILURE', error_code = $3, error_message = $4, finished_at = now(), updated_at = now()
         WHERE domain_id = $1 AND job_task_id = $2 AND status IN ('PENDING', 'IN_PROGRESS') RETURNING *`,
        [domainId, taskId, code, message.slice(0, 4000)],
      );
      const t = rows[0];
      if (t) {
        const job = await client.query(
          `UPDATE job SET status = 'FAILURE', error_code = 'ERROR_JOB_TASK', error_message = $3, remained_tasks = remained_tasks - 1,
             finished_at = now(), updated_at = now()
           WHERE domain_id = $1 AND job_id = $2 AND status = 'IN_PROGRESS' RETURNING job_id`,
          [domainId, t.job_id, `Job task ${taskId} failed: ${code}`],
        );
        if (job.rowCount) await deleteJobCosts(client, domainId, t.job_id);
      }
    });
  }

  /** The BullMQ processor. `finalAttempt`: a transient failure now fails the task instead of retrying. */
  async process(data: CollectTaskData, finalAttempt: boolean): Promise<string> {
    const { pool, logger } = this.deps;
    const t = await this.task(pool, data.domain_id, data.job_task_id);
    if (!t || FINAL.has(t.status)) return 'skipped';
    if ((await this.jobStatus(pool, t.domain_id, t.job_id)) !== 'IN_PROGRESS') {
      await this.markCanceled(t);
      return 'canceled';
    }
    try {
      const n = await this.collect(t);
      return `collected ${n}`;
    } catch (e) {
      if (e instanceof TaskCanceled) {
        await this.markCanceled(t);
        return 'canceled';
      }
      // A plugin that is down, slow or cut off mid-stream (503, `retryable`) is tried again with the
      // queue's backoff until the attempts run out; what the plugin refused or sent wrong is final.
      const permanent = e instanceof TaskFailure || e instanceof PluginError || (isApiError(e) && !isRetryable(e));
      const code = (e as { code?: string }).code && (permanent || isApiError(e)) ? String((e as { code: string }).code) : 'ERROR_COLLECT_FAILED';
      // What the tenant may not read (an outbound call's detail, PostgreSQL's quote of a value) goes to the log only.
      const detail = isOutboundRefused(e) || e instanceof TaskFailure ? e.detail : undefined;
      if (permanent || finalAttempt) {
        logger.warn({ job_task_id: t.job_task_id, err: (e as Error).message, ...(detail && { detail }) }, 'job task failed');
        await this.failTask(t.domain_id, t.job_task_id, code, (e as Error).message);
        return 'failed';
      }
      logger.warn({ job_task_id: t.job_task_id, err: (e as Error).message, ...(detail && { detail }) }, 'job task attempt failed; retrying');
      throw e;
    }
  }

  private async collect(t: TaskRow): Promise<number> {
    const { pool, plugins, directory, config } = this.deps;
    const { rows: dsRows } = await pool.query(`SELECT * FROM data_source WHERE domain_id = $1 AND data_source_id = $2`, [t.domain_id, t.data_source_id]);
    const ds = dsRows[0];
    if (!ds) throw new TaskFailure('ERROR_NOT_FOUND', `Data source ${t.data_source_id} no longer exists.`);
    if (ds.state !== 'ENABLED') throw new TaskFailure('ERROR_DATA_SOURCE_STATE', `Data source ${t.data_source_id} is disabled.`);
    // Chosen again for every task: the version published now (a task retried after its plugin moved
    // reaches the new endpoint); an unreadable plugin table is a 503, retried as a transient failure.
    const { plugin } = await plugins.choose(t.domain_id, ds.plugin_info);
    const secret_data = openDataSourceSecret(config.secretKeys, ds);
    await pool.query(
      `UPDATE job_task SET status = 'IN_PROGRESS', started_at = now(), updated_at = now(), created_count = 0
       WHERE domain_id = $1 AND job_task_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
      [t.domain_id, t.job_task_id],
    );

    const started = Date.now();
    const abort = new AbortController();
    // The task's bound (TASK_TIMEOUT_SECONDS): the fetch is cancelled, the task fails (issue #32).
    const { limits } = config;
    let timedOut = false;
    const overTime = () => new TaskFailure('ERROR_TASK_TIMEOUT', `The task did not finish within ${limits.taskTimeoutMs / 1000} s (TASK_TIMEOUT_SECONDS).`);
    // A crashed attempt's transaction was rolled back; this only guards against a committed leftover.
    // Outside the task's transaction: it reads every partition of cost, and the transaction must hold
    // no lock of the default partition, so that a month's partition can be attached while it runs.
    // Being committed on its own, it must never remove the rows of another attempt that finished the
    // task meanwhile: it deletes only while the task is unfinished, in the statement's one snapshot
    // (the rows of an attempt that commits later are not in it either).
    await pool.query(
      `DELETE FROM cost WHERE task_no = $3
         AND EXISTS (SELECT 1 FROM job_task WHERE domain_id = $1 AND job_task_id = $2 AND status IN ('PENDING', 'IN_PROGRESS'))`,
      [t.domain_id, t.job_task_id, t.task_no],
    );
    const client = await pool.connect();
    const deadline = setTimeout(() => ((timedOut = true), abort.abort()), limits.taskTimeoutMs).unref();
    let copy: CopyIn | undefined;
    const copySql = `COPY cost (${COST_COLUMNS.join(', ')}) FROM STDIN`;
    try {
      await client.query('BEGIN');
      copy = await CopyIn.start(client, copySql);
      // Months known to have their partition; a new one gets it before its first row is written.
      const partitioned = new Set<string>();
      let ensureFailed = false;

      const months = new Set<string>();
      const tagKeys = new Set<string>();
      const infoKeys = new Set<string>();
      const bad: RowError[] = [];
      let badCount = 0;
      let count = 0;
      const projects = new Map<string, string | null>(); // project_id -> workspace_id (null: unknown)
      const isWorkspaceDs = ds.resource_group === 'WORKSPACE';
      const rates = config.exchange.defaults;
      const taskNo = String(t.task_no);

      const rowError = (rec: CostRecord, message: string) => {
        badCount++;
        if (bad.length < MAX_REPORTED_ROWS) bad.push({ line: rec.line ?? 0, message });
      };
      /** The workspace of a record (its project's, checked against the directory), or null after reporting it. */
      const workspaceOf = (rec: CostRecord): string | null => {
        if (!rec.project_id) return ds.workspace_id;
        const ws = projects.get(rec.project_id);
        // One answer for an unknown project and another workspace's: neither tells the other apart.
        if (!ws || (isWorkspaceDs && ws !== ds.workspace_id)) return (rowError(rec, 'project_id is not a project this data source may write to'), null);
        return ws;
      };
      const resolveProjects = async (records: CostRecord[]) => {
        for (const rec of records) {
          if (rec.project_id && !projects.has(rec.project_id)) {
            projects.set(rec.project_id, (await directory.getProject(t.domain_id, rec.project_id))?.workspace_id ?? null);
          }
        }
      };

      let lastCheck = Date.now();
      const checkpoint = async () => {
        lastCheck = Date.now();
        await pool.query(`UPDATE job_task SET created_count = $3, updated_at = now() WHERE domain_id = $1 AND job_task_id = $2 AND status = 'IN_PROGRESS'`, [
          t.domain_id,
          t.job_task_id,
          count,
        ]);
        if ((await this.jobStatus(pool, t.domain_id, t.job_id)) !== 'IN_PROGRESS') throw new TaskCanceled();
        if (timedOut) throw overTime();
      };

      const pages = plugin.getData({
        options: ds.plugin_info.options ?? {},
        secret_data,
        schema: ds.plugin_info.schema_id || undefined,
        domain_id: t.domain_id,
        task_options: t.options,
        metadata: ds.plugin_info.metadata ?? {},
        signal: abort.signal,
      });
      for await (const page of pages) {
        for (const e of page.errors) {
          badCount++;
          if (bad.length < MAX_REPORTED_ROWS) bad.push(e);
        }
        await resolveProjects(page.results);
        const fresh = new Set<string>();
        for (const rec of page.results) {
          const m = rec.billed_date.slice(0, 7);
          if (!partitioned.has(m)) fresh.add(m);
        }
        if (fresh.size && !ensureFailed) {
          for (const m of await monthsWithPartition(pool, fresh)) {
            partitioned.add(m);
            fresh.delete(m);
          }
          if (fresh.size) {
            // A COPY routes rows with the partitions it saw at its start: end it, make the partitions
            // (another connection; this transaction holds no lock that attaching needs), start again.
            await copy.end();
            copy = undefined;
            try {
              await ensureMonthPartitions(pool, fresh);
            } catch (e) {
              // The rows go to the default partition: correct, not pruned. No further try in this task.
              ensureFailed = true;
              this.deps.logger.warn({ job_task_id: t.job_task_id, err: (e as Error).message }, 'month partitions not created');
            }
            copy = await CopyIn.start(client, copySql);
          }
          for (const m of fresh) partitioned.add(m);
        }
        let chunk = '';
        for (const rec of page.results) {
          // What PostgreSQL would refuse mid-COPY is reported as the row's error here, with its line.
          if (!Number.isFinite(rec.cost) || !Number.isFinite(rec.usage_quantity)) {
            rowError(rec, `${Number.isFinite(rec.cost) ? 'usage_quantity' : 'cost'} is not a finite number`);
            continue;
          }
          if (typeof rec.billed_date !== 'string' || !ISO_DATE.test(rec.billed_date)) {
            rowError(rec, 'billed_date is not YYYY-MM-DD');
            continue;
          }
          if (!Object.hasOwn(rates, rec.currency)) {
            rowError(rec, `currency has no exchange rate (supported: ${Object.keys(rates).join(', ')})`);
            continue;
          }
          const ws = workspaceOf(rec);
          if (ws === null) continue;
          const month = rec.billed_date.slice(0, 7);
          const regionKey = rec.provider && rec.region_code ? `${rec.provider}.${rec.region_code}` : '';
          let line: string;
          try {
            line = `${taskNo}\t${rec.billed_date}\t${rec.cost}\t${rec.usage_quantity}\t${month}\t${copyText(ws || DOMAIN_WORKSPACE)}\t${copyText(rec.project_id)}\t${copyText(rec.service_account_id)}\t${copyText(rec.account)}\t${copyText(rec.provider)}\t${copyText(rec.region_code)}\t${copyText(regionKey)}\t${copyText(rec.product)}\t${copyText(rec.usage_type)}\t${copyText(rec.usage_unit)}\t${copyText(rec.currency)}\t${copyJson(rec.tags)}\t${copyJson(rec.additional_info)}\n`;
          } catch (e) {
            if (!(e instanceof CopyValueError)) throw e;
            rowError(rec, `a value ${e.message}, which PostgreSQL cannot store`);
            continue;
          }
          if (badCount) continue; // once a row is bad, nothing more is written: the task fails
          if (++count > limits.maxRows) throw new TaskFailure('ERROR_COLLECT_LIMIT', `The task has more than ${limits.maxRows} cost rows (COLLECT_MAX_ROWS).`);
          months.add(month);
          // for...in with hasOwn: Object.keys' names without an array per row (most rows have none).
          for (const k in rec.tags) if (Object.hasOwn(rec.tags, k)) tagKeys.add(k);
          for (const k in rec.additional_info) if (Object.hasOwn(rec.additional_info, k)) infoKeys.add(k);
          chunk += line;
        }
        if (Math.max(tagKeys.size, infoKeys.size) > limits.maxTagKeys) throw tooManyTagKeys(limits.maxTagKeys);
        if (chunk) await copy.write(chunk);
        if (Date.now() - lastCheck >= PROGRESS_MS) await checkpoint();
      }
      if (badCount) {
        const list = bad.map((b) => `line ${b.line}: ${b.message}`).join('; ');
        throw new TaskFailure('ERROR_INVALID_COST_DATA', `${badCount} row(s) are not valid cost data${badCount > bad.length ? ` (first ${bad.length} shown)` : ''}: ${list}`);
      }
      await copy.end();
      copy = undefined;

      // Done: the task, its job's count and (for the last task) the replacement, all in this transaction.
      // The task's `changed` is the range its plugin declared, else the months it collected.
      const sorted = [...months].sort();
      const collectedRange = sorted.length ? JSON.stringify({ start: sorted[0], end: sorted[sorted.length - 1] }) : null;
      const done = await client.query(
        `UPDATE job_task SET status = 'SUCCESS', created_count = $3, changed = COALESCE(changed, $4::jsonb), finished_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE domain_id = $1 AND job_task_id = $2 AND status = 'IN_PROGRESS' RETURNING job_task_id`,
        [t.domain_id, t.job_task_id, count, collectedRange],
      );
      if (!done.rowCount) throw new TaskCanceled();
      const changed: ChangedInfo[] = [...months].sort().map((m) => ({ start: m, end: m }));
      const job = await client.query(
        `UPDATE job SET remained_tasks = remained_tasks - 1, changed = changed || $3::jsonb, updated_at = now()
         WHERE domain_id = $1 AND job_id = $2 AND status = 'IN_PROGRESS' RETURNING *`,
        [t.domain_id, t.job_id, JSON.stringify(changed)],
      );
      if (!job.rowCount) throw new TaskCanceled();
      const keys = await client.query(
        `UPDATE data_source SET cost_tag_keys = ARRAY(SELECT DISTINCT unnest(cost_tag_keys || $3::text[]) ORDER BY 1),
           cost_additional_info_keys = ARRAY(SELECT DISTINCT unnest(cost_additional_info_keys || $4::text[]) ORDER BY 1)
         WHERE domain_id = $1 AND data_source_id = $2 RETURNING cardinality(cost_tag_keys) AS tags, cardinality(cost_additional_info_keys) AS infos`,
        [t.domain_id, t.data_source_id, [...tagKeys], [...infoKeys]],
      );
      // The data source's keys (listed in every data-source answer) stay bounded across jobs too.
      if (keys.rows[0] && Math.max(keys.rows[0].tags, keys.rows[0].infos) > limits.maxTagKeys) throw tooManyTagKeys(limits.maxTagKeys);
      const collected = Date.now();
      if (job.rows[0].remained_tasks === 0) await this.closeJob(client, job.rows[0]);
      await client.query('COMMIT');
      this.deps.logger.info({ job_task_id: t.job_task_id, rows: count, collect_ms: collected - started, close_ms: Date.now() - collected }, 'job task collected');
      return count;
    } catch (e) {
      abort.abort();
      if (copy) await copy.fail(String((e as Error).message ?? e)).catch(() => {});
      await client.query('ROLLBACK').catch(() => {});
      throw (timedOut && !(e instanceof TaskCanceled) ? overTime() : undefined) ?? copyDataError(e) ?? e;
    } finally {
      clearTimeout(deadline);
      client.release();
    }
  }

  /** The last task of a job: replace earlier data of the changed months and rebuild their unified costs. */
  private async closeJob(client: PoolClient, job: { domain_id: string; job_id: string; data_source_id: string; changed: ChangedInfo[] }) {
    await lockDomainUnifiedCosts(client, job.domain_id);
    const compact = [...new Map((job.changed ?? []).map((c) => [JSON.stringify(c), c])).values()].sort((a, b) => a.start.localeCompare(b.start));
    // Every cost row of the data source belongs to a job that succeeded earlier or to this one (rows of
    // failed and canceled jobs are removed when they end), so "earlier data" is rows of earlier SUCCESS jobs.
    const prevTasks = await succeededTaskNumbers(client, job.domain_id, job.data_source_id);
    const collected = compact.filter((c) => /^\d{4}-\d{2}$/.test(c.start) && c.end === c.start && !c.filter).map((c) => c.start);
    const months = new Set(collected);
    if (prevTasks.length && collected.length) {
      // Months this job collected: the block ranges of each earlier task in those months, never this job's new rows.
      const { rows } = await client.query(
        `WITH d AS (DELETE FROM cost WHERE billed_month = ANY($1::text[]) AND task_no = ANY($2::int[]) RETURNING billed_month) SELECT DISTINCT billed_month FROM d`,
        [collected, prevTasks],
      );
      for (const r of rows) months.add(r.billed_month);
    }
    for (const c of compact) {
      if (!prevTasks.length || collected.includes(c.start)) continue;
      // Ranges a plugin declared changed (upstream's `changed`): earlier rows there go even if not collected again.
      const { start, end } = dateRange(c);
      const values: unknown[] = [prevTasks, start, end];
      let where = `task_no = ANY($1::int[]) AND billed_date >= $2::date AND ($3::date IS NULL OR billed_date < $3::date)`;
      for (const [k, v] of Object.entries(c.filter ?? {})) {
        if (FILTERABLE.has(k)) where += ` AND ${k} = $${values.push(String(v))}`;
      }
      const { rows } = await client.query(`WITH d AS (DELETE FROM cost WHERE ${where} RETURNING billed_month) SELECT DISTINCT billed_month FROM d`, values);
      for (const r of rows) months.add(r.billed_month);
    }
    await rebuildUnifiedCosts(client, this.deps, job.domain_id, [...months]);
    await client.query(
      `UPDATE job SET status = 'SUCCESS', changed = $3::jsonb, finished_at = clock_timestamp(), updated_at = clock_timestamp() WHERE domain_id = $1 AND job_id = $2`,
      [job.domain_id, job.job_id, JSON.stringify(compact)],
    );
    await client.query(`UPDATE data_source SET last_synchronized_at = clock_timestamp() WHERE domain_id = $1 AND data_source_id = $2`, [job.domain_id, job.data_source_id]);
  }

  /**
   * Housekeeping, run by the worker at start and every minute: jobs past their timeout become TIMEOUT;
   * unfinished tasks of running jobs whose BullMQ job is gone (a Redis restart without persistence, an
   * enqueue that failed after the commit) are queued again, and those whose BullMQ job died for good
   * (stalled too often) are failed.
   */
  async sweep(): Promise<{ requeued: number; failed: number; timedOut: number }> {
    const { pool, queue, config } = this.deps;
    const timedOut = await pool.query(
      `WITH j AS (
         UPDATE job SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now()
         WHERE status = 'IN_PROGRESS' AND created_at < now() - make_interval(secs => $1) RETURNING domain_id, job_id, data_source_id)
       , t AS (UPDATE job_task SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now()
         FROM j WHERE job_task.domain_id = j.domain_id AND job_task.job_id = j.job_id AND job_task.status IN ('PENDING', 'IN_PROGRESS'))
       , c AS (DELETE FROM cost WHERE task_no = ANY(ARRAY(SELECT t.task_no FROM job_task t JOIN j ON t.domain_id = j.domain_id AND t.job_id = j.job_id)))
       SELECT count(*)::int AS n FROM j`,
      [config.jobTimeoutSeconds],
    );
    // A task running far past its own bound (its worker wedged, not dead: BullMQ would retry a dead one)
    // fails here, and its job with it, without waiting for the job's timeout.
    const stuck = await pool.query<{ domain_id: string; job_task_id: string }>(
      `SELECT domain_id, job_task_id FROM job_task WHERE status = 'IN_PROGRESS' AND started_at < now() - make_interval(secs => $1)`,
      [config.limits.taskTimeoutMs / 1000 + STUCK_GRACE_SECONDS],
    );
    for (const r of stuck.rows) {
      await this.failTask(r.domain_id, r.job_task_id, 'ERROR_TASK_TIMEOUT', `The task did not finish within ${config.limits.taskTimeoutMs / 1000} s (TASK_TIMEOUT_SECONDS).`);
    }
    const { rows } = await pool.query<{ domain_id: string; job_task_id: string }>(
      `SELECT t.domain_id, t.job_task_id FROM job_task t JOIN job j ON j.domain_id = t.domain_id AND j.job_id = t.job_id
       WHERE j.status = 'IN_PROGRESS' AND t.status IN ('PENDING', 'IN_PROGRESS')`,
    );
    let requeued = 0;
    let failed = 0;
    for (const r of rows) {
      const state = await queue.getJobState(r.job_task_id);
      if (state === 'unknown') {
        await queue.add('collect', r, { jobId: r.job_task_id });
        requeued++;
      } else if (state === 'failed') {
        const bull = await queue.getJob(r.job_task_id);
        await this.failTask(r.domain_id, r.job_task_id, 'ERROR_COLLECT_FAILED', bull?.failedReason || 'The task failed.');
        failed++;
      }
    }
    return { requeued, failed: failed + stuck.rows.length, timedOut: timedOut.rows[0]?.n ?? 0 };
  }
}
