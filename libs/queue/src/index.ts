import IORedis, { type RedisOptions } from 'ioredis';
import { repeatFilter } from '@platform/core';
import { TRACE_FIELD, endSpan, injectTrace, startClientSpan, tracingEnabled, withSpan, type TraceCarrier } from '@platform/telemetry';
import { DelayedError, Queue, QueueEvents, Worker, type Job, type JobsOptions, type Processor, type QueueOptions, type WorkerOptions } from 'bullmq';
import { withFairShare, type FairShare } from './fair';

export { DelayedError, Queue, Worker, QueueEvents };
export type { Job, JobsOptions, Processor };
export { fairShareKey, type FairShare } from './fair';

/** The part of a pino logger this lib writes to. */
export interface ErrorLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/**
 * Gives a client (ioredis, a BullMQ Queue / Worker / QueueEvents, anything that emits `error`) an
 * `error` listener for good: on a plain EventEmitter an `error` event with no listener throws and kills
 * the process (ioredis and BullMQ catch it, and print it unstructured to stderr instead). The listener logs the message and code only, never the error object (it may carry the URL and its
 * password), and the same message at most once per 30 s with the count of repeats. An ioredis client
 * that comes back after errors logs `<what> reconnected`.
 */
export function attachErrorLogging<T extends ErrorEmitter>(emitter: T, logger: ErrorLogger | undefined, what: string): T {
  const once = repeatFilter();
  let failing = false;
  emitter.on('error', (err: Error) => {
    failing = true;
    if (!logger) return;
    const message = String(err?.message ?? err).slice(0, 500);
    const repeats = once(message);
    if (repeats < 0) return;
    const code = (err as { code?: unknown })?.code;
    logger.warn({ err: message, ...(typeof code === 'string' && { code }), ...(repeats && { repeats }) }, `${what} error`);
  });
  if (emitter instanceof IORedis) {
    emitter.on('ready', () => {
      if (!failing) return;
      failing = false;
      once.reset();
      logger?.info({}, `${what} reconnected`);
    });
  }
  return emitter;
}

/** Options of the Redis clients below: ioredis' own, plus who logs the client's errors and under what name. */
export interface RedisClientOptions extends RedisOptions {
  logger?: ErrorLogger;
  /** The name the client's errors are logged under (default `redis` / `queue redis`). */
  label?: string;
}

/**
 * While tracing is on: a span per Redis command sent inside a sampled operation, named after the
 * command only (its arguments hold keys and values: a job's whole data, through EVALSHA).
 */
function traceCommands(client: IORedis): IORedis {
  if (!tracingEnabled()) return client;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string; promise: Promise<unknown> }, stream?: unknown) => {
    const span = startClientSpan(command.name, { 'db.system.name': 'redis', 'db.operation.name': command.name });
    if (span) command.promise.then(() => endSpan(span), (e) => endSpan(span, e));
    return (send as (c: unknown, s?: unknown) => unknown)(command, stream);
  }) as IORedis['sendCommand'];
  return client;
}

/** Reconnects forever: every 200 ms more per attempt, at most every 2 s. */
const reconnectForever = (times: number) => Math.min(200 * times, 2000);

/**
 * A Redis client for the request path (the project directory, rate limits, readiness): while Redis is
 * down a command fails at once (no offline queue, `commandTimeout` 5 s for a Redis that stalls) so the
 * request answers 503 instead of hanging; the client reconnects by itself, forever, and its errors
 * are logged (see `attachErrorLogging`).
 */
export function createRedis(url: string, options: RedisClientOptions = {}): IORedis {
  const { logger, label = 'redis', ...redisOptions } = options;
  const client = new IORedis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: 5000,
    retryStrategy: reconnectForever,
    ...redisOptions,
  });
  return attachErrorLogging(traceCommands(client), logger, label);
}

/**
 * A connection for BullMQ. Workers block on Redis, so requests never give up on their own
 * (maxRetriesPerRequest: null) and the client reconnects forever after a Redis restart. Its errors
 * are logged (see `attachErrorLogging`).
 */
export function createQueueConnection(url: string, options: RedisClientOptions = {}): IORedis {
  const { logger, label = 'queue redis', ...redisOptions } = options;
  const client = new IORedis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: reconnectForever,
    ...redisOptions,
  });
  return attachErrorLogging(traceCommands(client), logger, label);
}

/**
 * A connection for a Queue that API requests add jobs through (the producer side): it fails fast —
 * no offline queue, a command in flight when the connection drops fails at once and is not sent again
 * after the reconnect, 5 s at most per command — so that while Redis is down the request answers 503
 * (or queues nothing and says so) at once instead of hanging; it reconnects by itself, forever.
 * Never give it to a Worker (workers block on Redis: `createQueueConnection`).
 */
export function createProducerConnection(url: string, options: RedisClientOptions = {}): IORedis {
  return createQueueConnection(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: 5000,
    label: 'queue redis',
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
  /** Logs the queue's or worker's `error` events (it always has a listener; without a logger it is silent). */
  logger?: ErrorLogger;
}

/** A BullMQ queue (the producer side), with an `error` listener (see `attachErrorLogging`). */
export function createQueue<T = unknown>(name: string, o: QueueFactoryOptions, options: Partial<QueueOptions> = {}): Queue<T> {
  const queue = new Queue<T>(name, {
    connection: o.connection,
    prefix: o.prefix ?? 'bull',
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
    ...options,
  });
  if (tracingEnabled()) traceProducer(queue as Queue, name);
  return attachErrorLogging(queue, o.logger, `queue ${name}`);
}

/** A job's data with the current trace context in `_trace` (TRACE_FIELD), when it is an object without one. */
function withTrace(data: unknown): unknown {
  if (!data || typeof data !== 'object' || Array.isArray(data) || TRACE_FIELD in data) return data;
  const carrier = injectTrace();
  return carrier ? { ...data, [TRACE_FIELD]: carrier } : data;
}

/**
 * While tracing is on, `add` and `addBulk` run in a producer span (`<queue> publish`), and each job's
 * data carries that span's context in `_trace`: the worker's span continues the trace (createWorker).
 */
function traceProducer(queue: Queue, name: string) {
  const add = queue.add.bind(queue);
  const addBulk = queue.addBulk.bind(queue);
  const attributes = (n: number) => ({ 'messaging.system': 'bullmq', 'messaging.operation.type': 'send', 'messaging.destination.name': name, 'messaging.batch.message_count': n });
  queue.add = (jobName, data, opts) => withSpan(`${name} publish`, { kind: 'producer', attributes: attributes(1) }, () => add(jobName, withTrace(data), opts));
  queue.addBulk = (jobs) =>
    withSpan(`${name} publish`, { kind: 'producer', attributes: attributes(jobs.length) }, () => addBulk(jobs.map((j) => ({ ...j, data: withTrace(j.data) }))));
}

/** The trace context a job's data carries (see createQueue), if any. */
export function jobTrace(job: Pick<Job, 'data'>): TraceCarrier | undefined {
  const carrier = (job.data as Record<string, unknown> | undefined)?.[TRACE_FIELD];
  return carrier && typeof carrier === 'object' && typeof (carrier as TraceCarrier).traceparent === 'string' ? (carrier as TraceCarrier) : undefined;
}

export interface WorkerFactoryOptions extends QueueFactoryOptions {
  /**
   * A probe of what the processor depends on (e.g. `postgresCheck(pool)`): rejects while it is down.
   * When the processor fails and the probe fails too, the failure is the dependency's, not the job's:
   * the job goes back to the queue without spending an attempt, and the queue pauses (0.5 s, doubling
   * up to 10 s while the dependency stays down). So an outage of any length fails no job; a job that
   * fails while its dependencies are up spends an attempt as usual.
   */
  dependencies?: () => Promise<unknown>;
}

const PAUSE_MIN_MS = 500;
const PAUSE_MAX_MS = 10_000;

/**
 * A worker whose jobs survive its crash: a job whose lock lapses (the process died mid-job) is
 * detected as stalled and handed to another worker, up to `maxStalledCount` times. Processors must be
 * idempotent: the same job may run again after a crash. With `dependencies`, jobs also survive an
 * outage of what they depend on (see WorkerFactoryOptions).
 */
export function createWorker<T = unknown, R = unknown>(
  name: string,
  processor: Processor<T, R>,
  o: WorkerFactoryOptions & { /** Fair sharing of the slots between groups of jobs (tenants): see FairShare. */ fairShare?: FairShare<T> },
  options: Partial<WorkerOptions> = {},
): Worker<T, R> {
  const probe = o.dependencies;
  // While tracing is on, each job runs in a consumer span (`<queue> process`) continuing the trace
  // its data carries (the request or the tick that queued it).
  const traced: Processor<T, R> = tracingEnabled()
    ? (job, token, signal) =>
        withSpan(
          `${name} process`,
          {
            kind: 'consumer',
            parent: jobTrace(job),
            attributes: { 'messaging.system': 'bullmq', 'messaging.operation.type': 'process', 'messaging.destination.name': name, 'messaging.message.id': job.id, 'bullmq.job.name': job.name, 'bullmq.job.attempt': job.attemptsMade + 1 },
          },
          () => processor(job, token, signal),
        )
    : processor;
  let pauseMs = PAUSE_MIN_MS;
  let pausedUntil = 0;
  const once = repeatFilter();
  const run: Processor<T, R> = probe
    ? async (job, token, signal) => {
        try {
          const out = await traced(job, token, signal);
          if (pauseMs > PAUSE_MIN_MS) {
            pauseMs = PAUSE_MIN_MS;
            once.reset();
            o.logger?.info({}, `worker ${name}: dependencies are back`);
          }
          return out;
        } catch (err) {
          if (await probe().then(() => true, () => false)) throw err;
          if (Date.now() >= pausedUntil) {
            try {
              await worker.rateLimit(pauseMs);
            } catch {
              throw err; // Redis is down as well: an ordinary failure (BullMQ retries it with backoff)
            }
            const repeats = once('dependency down');
            if (repeats >= 0) {
              o.logger?.warn({ err: String((err as Error)?.message ?? err).slice(0, 500), pause_ms: pauseMs, ...(repeats && { repeats }) }, `worker ${name}: a dependency is down; jobs go back to the queue`);
            }
            pausedUntil = Date.now() + pauseMs;
            pauseMs = Math.min(pauseMs * 2, PAUSE_MAX_MS);
          }
          throw Worker.RateLimitError();
        }
      }
    : traced;
  const prefix = o.prefix ?? 'bull';
  const fair = o.fairShare ? withFairShare(run, o.fairShare, { connection: o.connection, prefix, queue: name }) : run;
  const worker: Worker<T, R> = new Worker<T, R>(name, fair, {
    connection: o.connection,
    prefix,
    concurrency: 4,
    lockDuration: 30_000,
    stalledInterval: 15_000,
    maxStalledCount: 3,
    ...options,
  });
  return attachErrorLogging(worker, o.logger, `worker ${name}`);
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
