import IORedis, { type RedisOptions } from 'ioredis';
import { Queue, QueueEvents, Worker, type Job, type JobsOptions, type Processor, type QueueOptions, type WorkerOptions } from 'bullmq';

export { Queue, Worker, QueueEvents };
export type { Job, JobsOptions, Processor };

/**
 * A connection for BullMQ. Workers block on Redis, so requests never give up on their own
 * (maxRetriesPerRequest: null) and the client reconnects forever after a Redis restart.
 */
export function createQueueConnection(url: string, options: RedisOptions = {}): IORedis {
  return new IORedis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(200 * times, 2000),
    ...options,
  });
}

/**
 * Defaults every job gets: retries with exponential backoff; completed jobs kept for an hour, failed
 * ones kept (the dead-letter view: `deadLetters`).
 */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: false,
};

export interface QueueFactoryOptions {
  connection: IORedis;
  /** Key prefix (BullMQ's `prefix`): tests isolate themselves with it. */
  prefix?: string;
}

export function createQueue<T = unknown>(name: string, o: QueueFactoryOptions, options: Partial<QueueOptions> = {}): Queue<T> {
  return new Queue<T>(name, {
    connection: o.connection,
    prefix: o.prefix ?? 'bull',
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
    ...options,
  });
}

/**
 * A worker whose jobs survive its crash: a job whose lock lapses (the process died mid-job) is
 * detected as stalled and handed to another worker, up to `maxStalledCount` times. Processors must be
 * idempotent: the same job may run again after a crash.
 */
export function createWorker<T = unknown, R = unknown>(
  name: string,
  processor: Processor<T, R>,
  o: QueueFactoryOptions,
  options: Partial<WorkerOptions> = {},
): Worker<T, R> {
  return new Worker<T, R>(name, processor, {
    connection: o.connection,
    prefix: o.prefix ?? 'bull',
    concurrency: 4,
    lockDuration: 30_000,
    stalledInterval: 15_000,
    maxStalledCount: 3,
    ...options,
  });
}

/** Failed jobs that exhausted their attempts: what an operator looks at. */
export async function deadLetters<T>(queue: Queue<T>, limit = 100) {
  const jobs = await queue.getFailed(0, limit - 1);
  return jobs.map((j) => ({ id: j.id, name: j.name, data: j.data, failedReason: j.failedReason, attemptsMade: j.attemptsMade, finishedOn: j.finishedOn }));
}

interface Closable {
  close(): Promise<unknown>;
}

/**
 * Graceful shutdown: workers first (they finish their active jobs and take no new ones), then
 * queues, then connections. Safe to call twice.
 */
export function gracefulShutdown(parts: { workers?: Closable[]; queues?: Closable[]; connections?: IORedis[] }) {
  let closing: Promise<void> | undefined;
  return () =>
    (closing ??= (async () => {
      await Promise.allSettled((parts.workers ?? []).map((w) => w.close()));
      await Promise.allSettled((parts.queues ?? []).map((q) => q.close()));
      for (const c of parts.connections ?? []) await c.quit().catch(() => c.disconnect());
    })());
}
