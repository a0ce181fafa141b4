// Health and metrics: /healthz, /readyz (the readiness checks) and /metrics (the app's registry).
import type express from 'express';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { errors } from '@platform/errors';
import { RequestMetrics } from './request-metrics';
import { registerProcessMetrics, registerQueueMetrics, type CountedQueue } from './metrics';

const READY_TIMEOUT_MS = 2000;

/** Each check throws (or rejects) when its dependency is down. */
export type ReadinessChecks = Record<string, () => Promise<unknown>>;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/**
 * The app's metrics registry: the process's default metrics, the request histogram and counter
 * (RequestMetrics), and, made at each scrape and never on a request's path, each readiness check
 * (1 up, 0 down) and each queue's jobs by state.
 */
export function serviceMetrics(service: string, checks: ReadinessChecks, queues: CountedQueue[]): { registry: Registry; requests: RequestMetrics } {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new RequestMetrics(registry);
  const readiness = Object.entries(checks);
  new Gauge({
    name: 'platform_ready',
    help: 'Readiness of each dependency as /readyz checks it (1 ok, 0 unavailable)',
    labelNames: ['check'],
    registers: [registry],
    async collect() {
      const results = await Promise.all(readiness.map(([, check]) => withTimeout(check(), READY_TIMEOUT_MS).then(() => 1, () => 0)));
      readiness.forEach(([name], i) => this.set({ check: name }, results[i]));
    },
  });
  registerQueueMetrics(registry, queues);
  registerProcessMetrics(registry);
  return { registry, requests };
}

/** /healthz, /readyz and /metrics on the app. */
export function mountHealth(app: express.Express, service: string, checks: ReadinessChecks, registry: Registry): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service });
  });
  // `/readyz?only=redis,queue`: only the named checks (a deployment whose traffic needs only those, as
  // monitoring's webhook URL while PostgreSQL is down: docs/decisions/monitoring.md). An unknown name is 400.
  app.get('/readyz', async (req, res) => {
    const result: Record<string, string> = {};
    let ok = true;
    const all = Object.entries(checks);
    const only = typeof req.query.only === 'string' ? req.query.only.split(',').filter(Boolean) : undefined;
    const unknown = only?.find((n) => !all.some(([name]) => name === n));
    if (unknown !== undefined || (req.query.only !== undefined && typeof req.query.only !== 'string')) {
      const e = errors.invalidParameter('only', `readiness checks are ${all.map(([n]) => n).join(', ') || 'none'}`);
      res.status(400).json(e.toEnvelope());
      return;
    }
    await Promise.all(
      all.filter(([name]) => !only || only.includes(name)).map(async ([name, check]) => {
        try {
          await withTimeout(check(), READY_TIMEOUT_MS);
          result[name] = 'ok';
        } catch (e) {
          ok = false;
          result[name] = 'unavailable';
          req.log.warn({ check: name, err: (e as Error).message }, 'readiness check failed');
        }
      }),
    );
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', service, checks: result });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });
}
