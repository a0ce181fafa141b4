// A worker process's /metrics (issue #31): real BullMQ queues and workers on the test Redis, the real
// metrics server on a free port, scraped over HTTP as Prometheus does.
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createLogger, observePluginCall } from '@platform/core';
import { createQueue, createQueueConnection, createWorker } from '@platform/queue';
import { createTestRedis, waitFor } from '@platform/testing';
import { serveWorkerMetrics, workerMetricsPort } from './metrics';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** The value of one sample line (`name{labels} value`) of a scrape, or undefined. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe("a worker's /metrics", () => {
  const r = createTestRedis('worker-metrics');
  const prefix = r.prefix.replace(/:$/, '');
  const connection = createQueueConnection(redisUrl);
  const logger = createLogger('metrics-test', 'silent');
  afterAll(async () => {
    await connection.quit();
    await r.cleanup();
  });

  it("reports each queue's jobs by state, each job's run time by outcome, failed attempts and plugin calls", async () => {
    const queue = createQueue<{ fail: boolean }>('metered', { connection, prefix });
    const idle = createQueue('idle', { connection, prefix });
    const worker = createWorker<{ fail: boolean }>(
      'metered',
      async (job) => {
        await new Promise((res) => setTimeout(res, 30));
        if (job.data.fail) throw new Error('fails');
      },
      { connection, prefix },
    );
    const metrics = await serveWorkerMetrics({ service: 'test-worker', port: 0, logger, queues: [queue, idle], workers: [worker] });
    const base = `http://127.0.0.1:${(metrics.server!.address() as AddressInfo).port}`;
    try {
      await queue.add('ok', { fail: false });
      await queue.add('ok', { fail: false });
      await queue.add('bad', { fail: true }, { attempts: 2, backoff: { type: 'fixed', delay: 10 } });
      await idle.add('waits', {});
      observePluginCall('plugin-aws-cost', 'DataSource.init', 'OK', 0.02);
      const scrape = async () => {
        const res = await fetch(`${base}/metrics`);
        expect(res.status).toBe(200);
        return res.text();
      };
      const text = await waitFor(async () => {
        const t = await scrape();
        return sample(t, 'platform_queue_jobs', { queue: 'metered', state: 'failed' }) === 1 ? t : undefined;
      }, 15_000, 'the failed job');

      expect(sample(text, 'platform_queue_jobs', { queue: 'idle', state: 'waiting' })).toBe(1);
      expect(sample(text, 'platform_queue_jobs', { queue: 'metered', state: 'waiting' })).toBe(0);
      expect(sample(text, 'platform_job_duration_seconds_count', { queue: 'metered', outcome: 'completed' })).toBe(2);
      expect(sample(text, 'platform_job_duration_seconds_count', { queue: 'metered', outcome: 'failed' })).toBe(2);
      expect(sample(text, 'platform_job_duration_seconds_sum', { queue: 'metered', outcome: 'completed' })).toBeGreaterThanOrEqual(0.05);
      expect(sample(text, 'platform_job_failures_total', { queue: 'metered' })).toBe(2);
      expect(sample(text, 'platform_plugin_call_duration_seconds_count', { plugin_id: 'plugin-aws-cost', method: 'DataSource.init', code: 'OK' })).toBe(1);
      expect(text).toContain('service="test-worker"');
      expect(text).toContain('process_resident_memory_bytes');
      // Nothing else is served.
      expect((await fetch(`${base}/`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      metrics.close();
      await worker.close();
      await queue.close();
      await idle.close();
    }
  });

  it('a port already taken: the worker goes on without /metrics, and says so', async () => {
    const first = await serveWorkerMetrics({ service: 'a', port: 0, logger, queues: [], workers: [] });
    const port = (first.server!.address() as AddressInfo).port;
    const errors: string[] = [];
    const spy = { ...logger, error: (_o: object, msg: string) => errors.push(msg), info: () => {} } as unknown as typeof logger;
    const second = await serveWorkerMetrics({ service: 'b', port, logger: spy, queues: [], workers: [] });
    expect(second.server).toBeUndefined();
    expect(errors).toEqual(['b metrics server failed to listen; going on without /metrics']);
    first.close();
  });

  it('holds at most 64 connections: one more is closed at once, and the port still answers once they go', async () => {
    const metrics = await serveWorkerMetrics({ service: 'bounded', port: 0, logger, queues: [], workers: [] });
    const port = (metrics.server!.address() as AddressInfo).port;
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', reject);
      });
    const held = await Promise.all(Array.from({ length: 64 }, open));
    try {
      await new Promise((r) => setTimeout(r, 100));
      const extra = await open();
      held.push(extra);
      const closed = await new Promise<boolean>((resolve) => {
        extra.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 2000);
      });
      expect(closed).toBe(true);
      for (const s of held) s.destroy();
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0)) === 200, 5000, 'the port answering again');
    } finally {
      for (const s of held) s.destroy();
      metrics.close();
    }
  });

  it('METRICS_PORT, by default the app port + 1000', () => {
    const saved = { PORT: process.env.PORT, METRICS_PORT: process.env.METRICS_PORT };
    try {
      delete process.env.PORT;
      delete process.env.METRICS_PORT;
      expect(workerMetricsPort(8105)).toBe(9105);
      process.env.PORT = '3000';
      expect(workerMetricsPort(8105)).toBe(4000);
      process.env.METRICS_PORT = '9999';
      expect(workerMetricsPort(8105)).toBe(9999);
      process.env.METRICS_PORT = '70000';
      expect(() => workerMetricsPort(8105)).toThrow(/METRICS_PORT/);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
});
