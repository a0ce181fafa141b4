// What operators import (k8s/observability): the Prometheus alert rules, checked by promtool, and the
// Grafana dashboard; every metric their expressions name must be one the apps' or the workers' /metrics
// serves (the shared app of libs/http, with a real readiness check and a real BullMQ queue, as
// monitoring's and cost-analysis' apps have; a worker's metrics server with a real BullMQ worker).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import YAML from 'yaml';
import { createLogger, observePluginCall } from '@platform/core';
import { createPool, postgresCheck } from '@platform/db';
import { createServiceApp, serveWorkerMetrics } from '@platform/http';
import { createQueue, createQueueConnection, createWorker } from '@platform/queue';
import { TEST_REDIS_URL, waitFor } from '@platform/testing';

const root = path.resolve(__dirname, '../../..');
const RULES = 'k8s/observability/prometheus-rules.yaml';
const DASHBOARD = 'k8s/observability/grafana-dashboard.json';
const read = (rel: string) => readFileSync(path.join(root, rel), 'utf8');

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression selects (functions, label names, keywords and Grafana variables left out). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // grouping labels
    .replace(/\$\w+/g, ' '); // Grafana variables
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = m[0];
    const after = bare.slice(m.index! + word.length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(word.toLowerCase())) continue;
    if (/^\d/.test(word)) continue;
    names.add(word);
  }
  return [...names];
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rules = () => (YAML.parse(read(RULES)) as { groups: { name: string; rules: Rule[] }[] }).groups;
const dashboardExprs = () => {
  const d = JSON.parse(read(DASHBOARD)) as { panels: { type: string; title: string; targets?: { expr: string }[] }[] };
  return d.panels.filter((p) => p.type !== 'row').map((p) => ({ title: p.title, exprs: (p.targets ?? []).map((t) => t.expr) }));
};

describe('observability files', () => {
  let metricsText: string;
  let workerText: string;

  beforeAll(async () => {
    const pool = createPool('postgresql://postgres@127.0.0.1:5432/postgres', { max: 1 });
    const connection = createQueueConnection(TEST_REDIS_URL);
    const queue = createQueue('observability-spec', { connection, prefix: `t:observability:${process.pid}` });
    const app = createServiceApp({
      service: 'probe',
      operations: [],
      logger: createLogger('probe', 'silent'),
      readiness: { postgres: postgresCheck(pool), redis: () => connection.ping() },
      queues: [queue],
    });
    const server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await queue.add('job', { n: 1 });
      // A request, so that the per-operation series have samples.
      await (await fetch(`${base}/healthz`)).text();
      await (await fetch(`${base}/nowhere`)).text();
      metricsText = await (await fetch(`${base}/metrics`)).text();
      // A worker's /metrics, after it ran a job and called a plugin.
      const worker = createWorker('observability-spec', async () => {}, { connection, prefix: `t:observability:${process.pid}` });
      const metrics = await serveWorkerMetrics({ service: 'probe-worker', port: 0, logger: createLogger('probe', 'silent'), queues: [queue], workers: [worker] });
      observePluginCall('probe-plugin', 'DataSource.init', 'OK', 0.01);
      const workerBase = `http://127.0.0.1:${(metrics.server!.address() as AddressInfo).port}`;
      workerText = await waitFor(async () => {
        const text = await (await fetch(`${workerBase}/metrics`)).text();
        return /^platform_job_duration_seconds_count\{.*\} 1$/m.test(text) ? text : undefined;
      }, 10_000, 'the job run by the worker');
      metrics.close();
      await worker.close();
    } finally {
      server.close();
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      connection.disconnect();
      await pool.end();
    }
  });

  const served = () => new Set(`${metricsText}\n${workerText}`.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(/[{ ]/)[0]));

  it('the apps serve readiness and queue gauges beside the request metrics', () => {
    expect(metricsText).toMatch(/^platform_ready\{check="postgres",service="probe"\} 1$/m);
    expect(metricsText).toMatch(/^platform_ready\{check="redis",service="probe"\} 1$/m);
    expect(metricsText).toMatch(/^platform_queue_jobs\{queue="observability-spec",state="waiting",service="probe"\} 1$/m);
    expect(metricsText).toMatch(/^platform_queue_jobs\{queue="observability-spec",state="failed",service="probe"\} 0$/m);
    expect(metricsText).toMatch(/^http_requests_total\{operation="other",status="404",service="probe"\} 1$/m);
  });

  it('promtool accepts the alert rules', () => {
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => spawnSync(p, ['--version']).status === 0);
    if (!promtool) throw new Error("promtool is not installed (apt-get install prometheus, Debian's package); .ci/run installs it");
    const r = spawnSync(promtool, ['check', 'rules', path.join(root, RULES)], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status).toBe(0);
  });

  it('promtool refuses a broken rule (the check can fail)', () => {
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => spawnSync(p, ['--version']).status === 0);
    if (!promtool) throw new Error("promtool is not installed (apt-get install prometheus, Debian's package); .ci/run installs it");
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'rules-')), 'broken.yaml');
    writeFileSync(file, 'groups:\n  - name: x\n    rules:\n      - alert: Broken\n        expr: sum by (service (rate(http_requests_total[5m]))\n');
    const r = spawnSync(promtool, ['check', 'rules', file], { encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/FAILED/);
  });

  it('every alert has a severity, a summary and a description; the rules cover errors, latency, readiness, backlog and dead letters', () => {
    const all = rules().flatMap((g) => g.rules);
    for (const r of all) {
      expect(r.alert).toMatch(/^Platform[A-Za-z]+$/);
      expect(['critical', 'warning', 'info']).toContain(r.labels?.severity);
      expect(r.annotations?.summary).toBeTruthy();
      expect(r.annotations?.description).toBeTruthy();
    }
    const exprs = all.map((r) => r.expr).join('\n');
    for (const needle of ['http_requests_total{status=~"5.."}', 'http_request_duration_seconds_bucket', 'platform_ready', 'platform_queue_jobs{state=~"waiting|prioritized"}', 'platform_queue_jobs{state="failed"}', 'platform_job_failures_total', 'platform_plugin_call_duration_seconds_count{code!="OK"}', 'platform_plugin_call_duration_seconds_bucket']) {
      expect(exprs).toContain(needle);
    }
  });

  it('the workers serve their queues, their jobs and their plugin calls', () => {
    // One sample: its name, every label given (in any order, prom-client puts histograms' default label first) and its value.
    const sample = (name: string, labels: Record<string, string>) =>
      workerText.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries({ ...labels, service: 'probe-worker' }).every(([k, v]) => l.includes(`${k}="${v}"`)))?.split(' ').at(-1);
    expect(sample('platform_queue_jobs', { queue: 'observability-spec', state: 'failed' })).toBe('0');
    expect(sample('platform_job_duration_seconds_count', { queue: 'observability-spec', outcome: 'completed' })).toBe('1');
    expect(sample('platform_job_failures_total', { queue: 'observability-spec' })).toBe('0');
    expect(sample('platform_plugin_call_duration_seconds_count', { plugin_id: 'probe-plugin', method: 'DataSource.init', code: 'OK' })).toBe('1');
  });

  it("every metric the rules and the dashboard's panels name is one the apps or the workers serve", () => {
    const names = served();
    const unknown: string[] = [];
    for (const r of rules().flatMap((g) => g.rules)) for (const n of metricNames(r.expr)) if (!names.has(n)) unknown.push(`${r.alert}: ${n}`);
    const panels = dashboardExprs();
    expect(panels.length).toBeGreaterThanOrEqual(10);
    for (const p of panels) {
      expect(p.exprs.length).toBeGreaterThan(0);
      for (const e of p.exprs) {
        expect(metricNames(e).length).toBeGreaterThan(0);
        for (const n of metricNames(e)) if (!names.has(n)) unknown.push(`${p.title}: ${n}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the name check finds a metric that does not exist', () => {
    expect(metricNames('sum by (service, le) (rate(http_request_duration_seconds_bucket{service=~"$service"}[$__rate_interval])) / on (service) group_left () x_total')).toEqual([
      'http_request_duration_seconds_bucket',
      'x_total',
    ]);
    expect(served().has('x_total')).toBe(false);
  });
});
