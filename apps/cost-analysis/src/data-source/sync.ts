import type { PoolClient } from 'pg';
import { generateId } from '@platform/core';
import { withTransaction } from '@platform/db';
import { ApiError, errors, pluginErrors } from '@platform/errors';
import type { CostAnalysisDeps } from '../deps';
import type { JobRow } from '../job/repository';
import { PluginError, type ChangedInfo, type PluginTask } from '../plugin/types';
import type { DataSourceRow, PluginInfo } from './repository';
import { openDataSourceSecret } from './secret';
import { deleteJobCosts } from '../cost-rows';

export type SyncDeps = Pick<CostAnalysisDeps, 'pool' | 'plugins' | 'queue' | 'config' | 'logger'>;

export interface SyncInput {
  start?: string;
  no_preload_cache?: boolean;
}

/** A schedule slot to run: `at` is the data source's next_sync_at the caller saw, `next` what follows it. */
export interface Slot {
  at: Date;
  next: Date | null;
}

/** What became of a slot: a job, a FAILURE job (duplicate or plugin error), or another scheduler had it. */
export type SlotOutcome = { outcome: 'created'; job: JobRow } | { outcome: 'failed'; job: JobRow } | { outcome: 'taken' };

type Plan = { tasks: PluginTask[]; changed: ChangedInfo[]; synced_accounts: { account_id: string }[] };

/** At most this many tasks (and synced accounts) from one get_tasks: more is a plugin's fault, not a plan. */
const MAX_TASKS = 10_000;

/** A plugin's complaint about its options, as the 400 a caller can act on. */
export function asInvalid(e: unknown): never {
  if (e instanceof PluginError) throw errors.pluginRejected(e.code, e.message);
  throw e;
}

/**
 * Only an EXTERNAL data source syncs. LOCAL: upstream's ERROR_NOT_ALLOW_SYNC_COMMAND. WAREHOUSE: the same
 * 400 before any job is made (upstream reads such costs from Databricks at query time, a connector
 * this platform does not have); see docs/decisions/cost-analysis.md.
 */
function notSyncable(ds: DataSourceRow): void {
  const id = ds.data_source_id;
  if (ds.data_source_type === 'LOCAL') throw errors.notAllowed('ERROR_NOT_ALLOW_SYNC_COMMAND', `A LOCAL data source has no plugin and does not sync. (data_source_id = ${id})`);
  if (ds.data_source_type === 'WAREHOUSE') {
    const type = (ds.warehouse_info as { type?: string } | null)?.type ?? '';
    throw errors.notAllowed(
      'ERROR_NOT_ALLOW_SYNC_COMMAND',
      `A WAREHOUSE data source does not sync: its costs stay in the warehouse (${type}), and this platform has no warehouse connector to read them. (data_source_id = ${id})`,
    );
  }
}

class DuplicateJob extends Error {
  constructor(readonly running: JobRow) {
    super(`Data source ${running.data_source_id} already has a running job (${running.job_id}).`);
  }
}

/**
 * Creates collection jobs: the plugin divides a job into tasks, each queued as a BullMQ job after the
 * commit (jobId = job_task_id; the worker's sweep queues what a failed enqueue left). One code path for
 * the on-demand `sync` and for the scheduler's slots.
 */
export class CostJobs {
  constructor(private readonly deps: SyncDeps) {}

  /** On demand (data-source/sync): errors are the caller's answer (400, 409). */
  async sync(ds: DataSourceRow, input: SyncInput): Promise<JobRow> {
    notSyncable(ds);
    if (ds.state !== 'ENABLED') throw errors.wrongState('ERROR_DATA_SOURCE_STATE', `Data source ${ds.data_source_id} is disabled.`);
    const plan = await this.plan(ds, input.start).catch(asInvalid);
    const options = { start: input.start ?? null, no_preload_cache: input.no_preload_cache ?? false, sync_mode: 'MANUAL' };
    try {
      const job = await this.create(ds, options, plan, null);
      if (!job) throw new Error('a sync without a slot always creates its job');
      return job;
    } catch (e) {
      if (e instanceof DuplicateJob) throw errors.conflict('ERROR_DUPLICATE_JOB', e.message);
      throw e;
    }
  }

  /**
   * A scheduled slot. The slot is claimed (next_sync_at moved from `slot.at` to `slot.next`) in the
   * transaction that records its job, so it runs once however many schedulers try, and a crash before
   * the commit leaves it due. A running job of the data source (upstream: a FAILURE job with
   * ERROR_DUPLICATE_JOB) or a plugin error makes a FAILURE job for the slot: nobody else would see it.
   */
  async runSlot(ds: DataSourceRow, slot: Slot): Promise<SlotOutcome> {
    const options = { start: null, no_preload_cache: false, sync_mode: 'SCHEDULED', scheduled_at: slot.at.toISOString() };
    let plan: Plan;
    try {
      plan = await this.plan(ds, undefined);
    } catch (e) {
      const code = e instanceof PluginError || e instanceof ApiError ? e.code : 'ERROR_GET_JOB_TASKS';
      return this.createFailed(ds, options, slot, code, (e as Error).message);
    }
    try {
      const job = await this.create(ds, options, plan, slot);
      return job ? { outcome: 'created', job } : { outcome: 'taken' };
    } catch (e) {
      if (e instanceof DuplicateJob) return this.createFailed(ds, options, slot, 'ERROR_DUPLICATE_JOB', e.message);
      throw e;
    }
  }

  /**
   * The plugin's tasks for a job (upstream's create_cost_job). The plugin is chosen now (a version
   * published since the last sync is taken); with upgrade_mode AUTO a newer published version moves
   * the data source to it first, as upstream's get_data_source_plugin_endpoint_by_vo: its init is
   * called and the new version and metadata are stored in plugin_info.
   */
  private async plan(ds: DataSourceRow, start: string | undefined): Promise<Plan> {
    const info = ds.plugin_info as PluginInfo;
    const { plugin, version, remote } = await this.deps.plugins.choose(ds.domain_id, info);
    if (remote && version !== info.version) {
      const { metadata } = await Promise.resolve(plugin.init(info.options ?? {}, { domain_id: ds.domain_id }));
      await this.deps.pool.query(
        `UPDATE data_source SET plugin_info = plugin_info || jsonb_build_object('version', $3::text, 'metadata', $4::jsonb), updated_at = now()
         WHERE domain_id = $1 AND data_source_id = $2`,
        [ds.domain_id, ds.data_source_id, version, JSON.stringify(metadata)],
      );
      this.deps.logger.info({ data_source_id: ds.data_source_id, plugin_id: info.plugin_id, from: info.version, to: version }, 'data source plugin upgraded');
    }
    const secret = openDataSourceSecret(this.deps.config.secretKeys, ds);
    const r = await plugin.getTasks({
      options: info.options ?? {},
      secret_data: secret,
      schema: info.schema_id || undefined,
      domain_id: ds.domain_id,
      start,
      last_synchronized_at: ds.last_synchronized_at?.toISOString(),
    });
    if (r.tasks.length > MAX_TASKS || (r.synced_accounts?.length ?? 0) > MAX_TASKS || r.changed.length > MAX_TASKS) {
      throw pluginErrors.invalidResponse(`Job.get_tasks answered more than ${MAX_TASKS} tasks, changed ranges or synced accounts.`);
    }
    return { tasks: r.tasks, changed: r.changed, synced_accounts: r.synced_accounts ?? [] };
  }

  /** Serializes job creation per data source; claims the slot when there is one (false: already taken). */
  private async lock(client: PoolClient, ds: DataSourceRow, slot: Slot | null): Promise<boolean> {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sync:${ds.domain_id}:${ds.data_source_id}`]);
    if (!slot) return true;
    const claimed = await client.query(
      `UPDATE data_source SET next_sync_at = $4
       WHERE domain_id = $1 AND data_source_id = $2 AND next_sync_at = $3 AND state = 'ENABLED' AND schedule_state = 'ENABLED'`,
      [ds.domain_id, ds.data_source_id, slot.at, slot.next],
    );
    return claimed.rowCount === 1;
  }

  private async insertJob(
    client: PoolClient,
    ds: DataSourceRow,
    o: { status: string; options: object; tasks: number; changed: ChangedInfo[]; synced_accounts?: { account_id: string }[]; slot: Slot | null; error?: [string, string] },
  ) {
    const { rows } = await client.query<JobRow>(
      `INSERT INTO job (domain_id, job_id, workspace_id, resource_group, data_source_id, status, options, total_tasks, remained_tasks, changed,
         error_code, error_message, scheduled_at, synced_accounts, finished_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13::jsonb, CASE WHEN $6 <> 'IN_PROGRESS' THEN now() END) RETURNING *`,
      [
        ds.domain_id,
        generateId('job'),
        ds.workspace_id,
        ds.resource_group,
        ds.data_source_id,
        o.status,
        JSON.stringify(o.options),
        o.tasks,
        JSON.stringify(o.changed),
        o.error?.[0] ?? '',
        (o.error?.[1] ?? '').slice(0, 4000),
        o.slot?.at ?? null,
        JSON.stringify(o.synced_accounts ?? []),
      ],
    );
    return rows[0];
  }

  private async createFailed(ds: DataSourceRow, options: object, slot: Slot, code: string, message: string): Promise<SlotOutcome> {
    const job = await withTransaction(this.deps.pool, async (client) => {
      if (!(await this.lock(client, ds, slot))) return null;
      return this.insertJob(client, ds, { status: 'FAILURE', options, tasks: 0, changed: [], slot, error: [code, message] });
    });
    if (!job) return { outcome: 'taken' };
    this.deps.logger.warn({ data_source_id: ds.data_source_id, job_id: job.job_id, scheduled_at: slot.at.toISOString(), error_code: code }, 'scheduled sync failed');
    return { outcome: 'failed', job };
  }

  /** The job and its tasks (null: the slot was taken). A running job past JOB_TIMEOUT_SECONDS is TIMEOUT first. */
  private async create(ds: DataSourceRow, options: object, { tasks, changed, synced_accounts }: Plan, slot: Slot | null): Promise<JobRow | null> {
    const { pool, queue, config } = this.deps;
    const taskIds: string[] = [];
    const job = await withTransaction(pool, async (client) => {
      if (!(await this.lock(client, ds, slot))) return null;
      const running = await client.query<JobRow>(`SELECT * FROM job WHERE domain_id = $1 AND data_source_id = $2 AND status = 'IN_PROGRESS'`, [
        ds.domain_id,
        ds.data_source_id,
      ]);
      for (const r of running.rows) {
        if (Date.now() - r.created_at.getTime() < config.jobTimeoutSeconds * 1000) throw new DuplicateJob(r);
        await client.query(
          `UPDATE job SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND job_id = $2`,
          [r.domain_id, r.job_id],
        );
        await client.query(
          `UPDATE job_task SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now()
           WHERE domain_id = $1 AND job_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
          [r.domain_id, r.job_id],
        );
        await deleteJobCosts(client, r.domain_id, r.job_id);
      }
      const row = await this.insertJob(client, ds, { status: tasks.length ? 'IN_PROGRESS' : 'SUCCESS', options, tasks: tasks.length, changed, synced_accounts, slot });
      for (const t of tasks) {
        const id = generateId('job-task');
        taskIds.push(id);
        await client.query(
          `INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id, options, changed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
          [ds.domain_id, id, ds.workspace_id, ds.resource_group, row.job_id, ds.data_source_id, JSON.stringify(t.task_options), t.task_changed ? JSON.stringify(t.task_changed) : null],
        );
      }
      if (!tasks.length) await client.query(`UPDATE data_source SET last_synchronized_at = now() WHERE domain_id = $1 AND data_source_id = $2`, [ds.domain_id, ds.data_source_id]);
      return row;
    });
    if (!job) return null;
    // Queued after the commit (a worker must find the task). If Redis is down now, the worker's sweep
    // queues the PENDING tasks later: jobId = job_task_id keeps it to one BullMQ job per task.
    await queue
      .addBulk(taskIds.map((id) => ({ name: 'collect', data: { domain_id: ds.domain_id, job_task_id: id }, opts: { jobId: id, attempts: config.worker.attempts } })))
      .catch((err) => this.deps.logger.warn({ err: (err as Error).message, job_id: job.job_id }, 'queueing job tasks failed; the worker sweep will retry'));
    return job;
  }
}
