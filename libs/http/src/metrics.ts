// The metrics every process serves beside its request metrics: its queues' jobs by state, the jobs its
// workers ran, and its plugin calls; and the small /metrics server of a worker process.
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { envInt, pluginCallDuration, type Logger } from '@platform/core';

/** The job states platform_queue_jobs reports per queue. */
const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'];
const SCRAPE_TIMEOUT_MS = 2000;
/** The run time buckets of a job (seconds): a webhook batch in ms, a cost collection in minutes. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800];

/** A BullMQ queue as /metrics reads it (anything with a name and getJobCounts). */
export interface CountedQueue {
  name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

/** A BullMQ worker as /metrics listens to it. */
export interface ObservedWorker {
  name: string;
  on(event: 'completed', listener: (job: JobTimes) => void): unknown;
  on(event: 'failed', listener: (job: JobTimes | undefined, err: Error) => void): unknown;
}
interface JobTimes {
  processedOn?: number;
  finishedOn?: number;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)))]).finally(() => clearTimeout(timer));
}

/** The metrics of the process itself in `registry`: the plugin calls it made (libs/core observePluginCall). */
export function registerProcessMetrics(registry: Registry) {
  registry.registerMetric(pluginCallDuration);
}

/**
 * `platform_queue_jobs{queue,state}`: each queue's jobs by state (failed: dead letters, their attempts
 * spent), counted when scraped, never on a request's path. A queue whose Redis is down has no samples
 * (not stale ones); platform_ready says why.
 */
export function registerQueueMetrics(registry: Registry, queues: readonly CountedQueue[]) {
  if (!queues.length) return;
  new Gauge({
    name: 'platform_queue_jobs',
    help: 'Jobs of each BullMQ queue by state (failed: dead letters, their attempts spent)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        queues.map(async (q) => {
          const counts = await withTimeout(q.getJobCounts(...QUEUE_STATES), SCRAPE_TIMEOUT_MS).catch(() => undefined);
          for (const state of QUEUE_STATES) if (counts) this.set({ queue: q.name, state }, counts[state] ?? 0);
        }),
      );
    },
  });
}

/**
 * `platform_job_duration_seconds{queue,outcome}` (completed / failed) and `platform_job_failures_total{queue}`
 * (every failed attempt, retried or not) of the jobs `workers` run in this process.
 */
export function registerJobMetrics(registry: Registry, workers: readonly ObservedWorker[]) {
  const duration = new Histogram({
    name: 'platform_job_duration_seconds',
    help: 'Run time of each job attempt by queue and outcome (completed, failed)',
    labelNames: ['queue', 'outcome'],
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({ name: 'platform_job_failures_total', help: 'Failed job attempts by queue (retried or not)', labelNames: ['queue'], registers: [registry] });
  // An attempt that will be retried has no finishedOn: it ended now.
  const seconds = (job: JobTimes | undefined) => (job?.processedOn ? Math.max(0, (job.finishedOn ?? Date.now()) - job.processedOn) / 1000 : undefined);
  for (const w of workers) {
    failures.inc({ queue: w.name }, 0);
    w.on('completed', (job) => {
      const s = seconds(job);
      if (s !== undefined) duration.observe({ queue: w.name, outcome: 'completed' }, s);
    });
    w.on('failed', (job) => {
      failures.inc({ queue: w.name });
      const s = seconds(job);
      if (s !== undefined) duration.observe({ queue: w.name, outcome: 'failed' }, s);
    });
  }
}

/**
 * `METRICS_PORT`: where a worker process serves /metrics. Default: its app's port + 1000 (`PORT`,
 * else the app's default port), monitoring-worker 9105, cost-analysis-worker 9102; 0 takes a free port.
 */
export function workerMetricsPort(appPort: number): number {
  const port = envInt('METRICS_PORT', envInt('PORT', appPort) + 1000);
  if (port < 0 || port > 65535) throw new Error(`environment variable METRICS_PORT must be a port (0-65535), got ${port}`);
  return port;
}

export interface WorkerMetricsOptions {
  service: string;
  port: number;
  logger: Logger;
  queues: readonly CountedQueue[];
  workers: readonly ObservedWorker[];
}

/**
 * A worker process's /metrics (and /healthz), as the apps serve them: the process' default metrics,
 * its queues' jobs by state, its jobs' run times and failures, its plugin calls. Nothing else is
 * answered (404); only GET. Resolves once listening, with the server (close it at shutdown). A port
 * that cannot be taken is logged as an error and the worker goes on without /metrics: its jobs matter
 * more than their figures (Prometheus reports the target down).
 */
export async function serveWorkerMetrics(o: WorkerMetricsOptions): Promise<{ server: Server | undefined; close(): void }> {
  const registry = new Registry();
  registry.setDefaultLabels({ service: o.service });
  collectDefaultMetrics({ register: registry });
  registerProcessMetrics(registry);
  registerQueueMetrics(registry, o.queues);
  registerJobMetrics(registry, o.workers);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/healthz')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', service: o.service }));
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.maxConnections = 64;
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err) => {
      o.logger.error({ err: err.message, port: o.port }, `${o.service} metrics server failed to listen; going on without /metrics`);
      resolve(false);
    });
    server.listen(o.port, () => resolve(true));
  });
  if (!listening) return { server: undefined, close: () => {} };
  o.logger.info({ port: (server.address() as { port: number }).port }, `${o.service} metrics listening`);
  return { server, close: () => void server.close() };
}
