import type IORedis from 'ioredis';
import { postgresCheck } from '@platform/db';
import { createQueue, createWorker, type Queue, type Worker } from '@platform/queue';
import type { Clock } from '../deps';
import type { DataSourceRow } from './repository';
import { nextSlot } from './schedule';
import { CostJobs, type SyncDeps } from './sync';

/** The scheduler's queue: one BullMQ job scheduler whose jobs are ticks. */
export const SCHEDULE_QUEUE = 'cost-analysis-schedule';
export const SCHEDULER_ID = 'data-source-sync';
/** A tick every minute, at the minute (UTC): a due slot runs within a minute of its hour. */
export const TICK_PATTERN = '* * * * *';

export type SchedulerDeps = SyncDeps & { clock: Clock };

export interface TickReport {
  created: number;
  failed: number;
  taken: number;
  errors: number;
}

/**
 * Runs the schedule: every data source whose `next_sync_at` has come gets one sync job for that slot
 * (CostJobs.runSlot claims the slot in the job's own transaction), and `next_sync_at` moves to the first
 * slot after now. Slots missed while no scheduler ran are not replayed one by one: the first tick after
 * the gap runs the data source once and moves on.
 */
export class DataSourceScheduler {
  private readonly jobs: CostJobs;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly batch = 100,
  ) {
    this.jobs = new CostJobs(deps);
  }

  private async due(now: Date, after: [Date, string, string] | null): Promise<DataSourceRow[]> {
    const { rows } = await this.deps.pool.query<DataSourceRow & { schedule_hours: number[] | null }>(
      `SELECT * FROM data_source
       WHERE next_sync_at <= $1 AND state = 'ENABLED' AND schedule_state = 'ENABLED' AND data_source_type = 'EXTERNAL'
         AND ($2::timestamptz IS NULL OR (next_sync_at, domain_id, data_source_id) > ($2, $3::text, $4::text))
       ORDER BY next_sync_at, domain_id, data_source_id LIMIT $5`,
      [now, after?.[0] ?? null, after?.[1] ?? null, after?.[2] ?? null, this.batch],
    );
    return rows;
  }

  /** One pass over every due data source, as of `now` (the injected clock). */
  async tick(now: Date = this.deps.clock()): Promise<TickReport> {
    const report: TickReport = { created: 0, failed: 0, taken: 0, errors: 0 };
    let cursor: [Date, string, string] | null = null;
    for (;;) {
      const rows = await this.due(now, cursor);
      for (const ds of rows) {
        const slot = { at: ds.next_sync_at as Date, next: nextSlot(ds.schedule_hours ?? [], now) };
        try {
          const r = await this.jobs.runSlot(ds, slot);
          report[r.outcome]++;
          if (r.outcome === 'created') {
            this.deps.logger.info({ data_source_id: ds.data_source_id, job_id: r.job.job_id, scheduled_at: slot.at.toISOString() }, 'scheduled sync started');
          }
        } catch (e) {
          // Left due: the next tick tries the slot again.
          report.errors++;
          this.deps.logger.warn({ data_source_id: ds.data_source_id, scheduled_at: slot.at.toISOString(), err: (e as Error).message }, 'scheduled sync could not start');
        }
      }
      if (rows.length < this.batch) return report;
      const last = rows[rows.length - 1];
      cursor = [last.next_sync_at as Date, last.domain_id, last.data_source_id];
    }
  }
}

/**
 * The scheduler on BullMQ (src/worker.ts): a job scheduler with a fixed id makes one tick job per
 * minute, whatever the number of worker replicas that declare it, and a worker runs the ticks. Job
 * schedulers live in Redis, so they survive worker restarts; `ensure` declares it again every minute,
 * so a Redis that lost its data gets it back. A duplicated tick is harmless: slots are claimed in
 * Postgres.
 */
export function startScheduler(deps: SchedulerDeps, connection: IORedis, o: { ensureMs?: number } = {}) {
  const { config, logger } = deps;
  const scheduler = new DataSourceScheduler(deps);
  const queue: Queue = createQueue(SCHEDULE_QUEUE, { connection, prefix: config.queuePrefix, logger });
  const ensure = () =>
    queue.upsertJobScheduler(SCHEDULER_ID, { pattern: TICK_PATTERN }, { name: 'tick', opts: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } });
  const worker: Worker<unknown, TickReport> = createWorker<unknown, TickReport>(
    SCHEDULE_QUEUE,
    async () => {
      const r = await scheduler.tick();
      if (r.created || r.failed || r.errors) logger.info(r, 'data source schedule tick');
      return r;
    },
    { connection, prefix: config.queuePrefix, logger, dependencies: postgresCheck(deps.pool) },
    { concurrency: 1 },
  );
  // Not awaited: with Redis down the worker still starts (and shuts down); the interval declares it later.
  const declare = () => void ensure().catch((err) => logger.warn({ err: (err as Error).message }, 'declaring the data source scheduler failed'));
  declare();
  const timer = setInterval(declare, o.ensureMs ?? 60_000);
  timer.unref();
  return {
    scheduler,
    queue,
    worker,
    ensure,
    async close() {
      clearInterval(timer);
      await worker.close();
      await queue.close();
    },
  };
}
