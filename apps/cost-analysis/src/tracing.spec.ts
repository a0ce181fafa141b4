// Traces end to end (issue #21) in cost-analysis: the app and the collection worker as real processes
// (bundled as the build bundles them), exporting OTLP/HTTP JSON to a receiver this test runs. A sync
// carrying a `traceparent` continues that trace through the app, the queue and the worker's task down
// to its SQL statements, with no collected value and no URL query (a signature) in any attribute; a
// scheduled sync is one trace from the scheduler's tick to its tasks' SQL.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { bearer, bundleEntry, freeTcpPort, otlpEnv, otlpReceiver, spanAttribute, spanText, startBundledProcess, testKeys, waitFor, type OtlpReceiver, type OtlpSpan, createTempDatabase, type TempDatabase } from '@platform/testing';
import { createQueue } from '@platform/queue';
import { COLLECT_QUEUE } from './collector/queue';
import { SCHEDULE_QUEUE } from './data-source/scheduler';
import { createTestCostAnalysis, serveFiles } from './test-support';

const ROOT = path.resolve(__dirname, '../../..');

/** src/<entry>.ts bundled as the build bundles it, under the repository (Prisma's client imports its runtime as ESM: node_modules must be up the tree). */
function bundle(entry: 'main' | 'worker'): string {
  mkdirSync(path.join(ROOT, 'tmp'), { recursive: true });
  return bundleEntry(path.join(__dirname, `${entry}.ts`), path.join(mkdtempSync(path.join(ROOT, 'tmp', `cost-${entry}-`)), `${entry}.js`));
}

describe('traces through the cost-analysis app, the queue and the collection worker', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let pluginDb: TempDatabase;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let receiver: OtlpReceiver;
  const children: ChildProcess[] = [];
  let base: string;
  let appLines: string[] = [];
  let workerLines: string[] = [];
  // A value only the collected file holds: it reaches the database as a bound parameter, never an attribute.
  const marker = `product-${randomBytes(8).toString('hex')}`;
  // A signed URL's signature: the download's span keeps its URL without the query.
  const signature = `sig${randomBytes(12).toString('hex')}`;

  const bundles: string[] = [];
  beforeAll(async () => {
    const [mainFile, workerFile] = [bundle('main'), bundle('worker')];
    bundles.push(path.dirname(mainFile), path.dirname(workerFile));
    receiver = await otlpReceiver();
    t = await createTestCostAnalysis();
    pluginDb = await createTempDatabase({ app: 'plugin' });
    files = await serveFiles({ [`/costs.csv?signature=${signature}`]: `cost,currency,provider,product,year,month,day\n1.5,USD,aws,${marker},2024,1,2\n2.5,USD,aws,${marker},2024,1,3\n` });
    const port = await freeTcpPort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: t.config.databaseUrl,
      // the plugin module's table, where published plugins are resolved (empty: the built-ins serve)
      PLUGIN_DATABASE_URL: pluginDb.url,
      REDIS_URL: t.config.redisUrl,
      QUEUE_PREFIX: t.config.queuePrefix,
      DIRECTORY_PREFIX: t.config.directoryPrefix,
      OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1',
      JWT_PUBLIC_KEY: testKeys.publicPem,
      LOG_LEVEL: 'info',
      ...otlpEnv(receiver),
    };
    const app = await startBundledProcess(mainFile, { ...env, PORT: String(port) }, () =>
      fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    );
    children.push(app.child);
    appLines = app.lines;
    const worker = await startBundledProcess(workerFile, env, (lines) => lines.some((l) => l.includes('cost collection worker started')));
    children.push(worker.child);
    workerLines = worker.lines;
  }, 120_000);

  afterAll(async () => {
    for (const c of children) {
      if (c.exitCode !== null) continue;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }
    receiver?.close();
    await files?.close();
    await t?.close();
    await pluginDb?.drop();
    for (const dir of bundles) rmSync(dir, { recursive: true, force: true });
  });

  it('continues an incoming traceparent from data-source/sync to the worker task and its SQL', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const call = async (p: string, body: object, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}/cost-analysis/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: owner, ...headers }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const ds = await call('data-source/register', {
      name: 'traced',
      resource_group: 'WORKSPACE',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: files.url(`/costs.csv?signature=${signature}`) } },
    });
    if (ds.status !== 200) console.log(appLines.join('\n'));
    expect(ds.status).toBe(200);

    const traceId = randomBytes(16).toString('hex');
    const parentSpanId = randomBytes(8).toString('hex');
    const job = await call('data-source/sync', { data_source_id: ds.body.data_source_id }, { traceparent: `00-${traceId}-${parentSpanId}-01` });
    expect(job.status).toBe(200);
    await waitFor(async () => (await call('job/get', { job_id: job.body.job_id })).body.status === 'SUCCESS', 30_000);

    const statement = (s: OtlpSpan) => String(spanAttribute(s, 'db.statement') ?? spanAttribute(s, 'db.query.text'));
    const isSql = (s: OtlpSpan) => (spanAttribute(s, 'db.system') ?? spanAttribute(s, 'db.system.name')) === 'postgresql';
    const ours = () => receiver.spans.filter((s) => s.traceId === traceId);
    const workerSql = () => ours().filter((s) => s.service === 'cost-analysis-worker' && isSql(s));
    const consumerDone = () => ours().some((s) => s.service === 'cost-analysis-worker' && s.name === `${COLLECT_QUEUE} process`);
    await waitFor(async () => consumerDone() && ours().some((s) => s.service === 'cost-analysis' && s.kind === 2), 15_000, 'the spans of both processes');
    const spans = ours();
    const byId = new Map(spans.map((s) => [s.spanId, s]));

    const server = spans.find((s) => s.service === 'cost-analysis' && s.kind === 2);
    expect(server?.name).toBe('POST /cost-analysis/v1/data-source/sync');
    expect(server?.parentSpanId).toBe(parentSpanId);
    expect(spans.filter((s) => s.service === 'cost-analysis' && isSql(s) && byId.has(s.parentSpanId!)).length).toBeGreaterThan(0);
    const producer = spans.find((s) => s.service === 'cost-analysis' && s.kind === 4);
    expect(producer?.name).toBe(`${COLLECT_QUEUE} publish`);
    const consumer = spans.find((s) => s.service === 'cost-analysis-worker' && s.name === `${COLLECT_QUEUE} process`);
    expect(consumer?.parentSpanId).toBe(producer!.spanId);
    // Every SQL span of the worker's task hangs under the task's span, in the caller's trace.
    const underConsumer = (s: OtlpSpan): boolean => s.parentSpanId === consumer!.spanId || (byId.has(s.parentSpanId!) && underConsumer(byId.get(s.parentSpanId!)!));
    // (the costs themselves go in with COPY, which pg's instrumentation does not see; the unified costs with an INSERT)
    expect(workerSql().map(statement)).toEqual(expect.arrayContaining([expect.stringMatching(/^INSERT INTO unified_cost\b/), expect.stringMatching(/^UPDATE job SET status = 'SUCCESS'/)]));
    for (const s of workerSql()) expect(underConsumer(s)).toBe(true);
    // The file's download (node:http) is a client span of the task, its URL without a query.
    const download = spans.find((s) => s.service === 'cost-analysis-worker' && s.kind === 3 && s.name === 'GET');
    expect(download && underConsumer(download)).toBe(true);
    expect(spanText(download!)).toContain('/costs.csv');

    // No collected value, and no signature, anywhere in what was exported.
    for (const secret of [marker, signature]) {
      expect(receiver.bodies.join('\n')).not.toContain(secret);
      for (const s of receiver.spans) expect(spanText(s)).not.toContain(secret);
    }
  }, 60_000);

  it("traces a scheduled sync from the scheduler's tick to the collection of its tasks, in the worker", async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const call = async (p: string, body: object) => {
      const res = await fetch(`${base}/cost-analysis/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: owner }, body: JSON.stringify(body) });
      return (await res.json()) as any;
    };
    const ds = await call('data-source/register', {
      name: 'scheduled',
      resource_group: 'WORKSPACE',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: files.url(`/costs.csv?signature=${signature}`) } },
    });
    // Its slot is due now; a tick (the scheduler's, each minute, or this one) starts its sync.
    await t.db.pool.query(`UPDATE data_source SET next_sync_at = now() - interval '1 minute' WHERE data_source_id = $1`, [ds.data_source_id]);
    const schedule = createQueue(SCHEDULE_QUEUE, { connection: t.queueConnection, prefix: t.config.queuePrefix });
    await schedule.add('tick', {}, { attempts: 1, removeOnComplete: true });
    await schedule.close();
    const job = await waitFor(async () => (await call('job/list', { data_source_id: ds.data_source_id })).results?.find((j: { status: string }) => j.status === 'SUCCESS'), 30_000, 'the scheduled job');

    // The task's span continues the tick's trace: tick (consumer) → collect publish → collect process → SQL.
    const process = () => receiver.spans.find((s) => s.service === 'cost-analysis-worker' && s.name === `${COLLECT_QUEUE} process` && spanAttribute(s, 'messaging.message.id') !== undefined && receiver.spans.some((x) => x.traceId === s.traceId && x.name === `${SCHEDULE_QUEUE} process`));
    const task = await waitFor(process, 15_000, 'the task span of the scheduled sync');
    const trace = receiver.spans.filter((s) => s.traceId === task.traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const tick = trace.find((s) => s.name === `${SCHEDULE_QUEUE} process`)!;
    expect(tick).toMatchObject({ service: 'cost-analysis-worker', kind: 5 });
    expect(tick.parentSpanId ?? '').toBe('');
    const publish = byId.get(task.parentSpanId!);
    expect(publish).toMatchObject({ name: `${COLLECT_QUEUE} publish`, kind: 4, service: 'cost-analysis-worker', parentSpanId: tick.spanId });
    const statements = trace.filter((s) => s.parentSpanId === task.spanId && (spanAttribute(s, 'db.system.name') ?? spanAttribute(s, 'db.system')) === 'postgresql');
    expect(statements.map((s) => String(spanAttribute(s, 'db.query.text') ?? spanAttribute(s, 'db.statement')))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^UPDATE job SET status = 'SUCCESS'/)]),
    );
    // The job the tick created is the one whose task this is.
    expect(trace.some((s) => s.service === 'cost-analysis-worker' && /^INSERT INTO job \(/.test(String(spanAttribute(s, 'db.query.text'))))).toBe(true);
    expect(job.job_id).toMatch(/^job-/);
  }, 60_000);

  it("serves the worker's /metrics: the collection's and the scheduler's queues, their jobs' run times and failures", async () => {
    const listening = workerLines.map((l) => (l.startsWith('{') ? (JSON.parse(l) as { msg?: string; port?: number }) : {})).find((l) => l.msg === 'cost-analysis-worker metrics listening');
    expect(listening?.port).toBeGreaterThan(0);
    const text = await (await fetch(`http://127.0.0.1:${listening!.port}/metrics`)).text();
    const has = (re: RegExp) => text.split('\n').some((l) => re.test(l));
    for (const queue of [COLLECT_QUEUE, SCHEDULE_QUEUE]) {
      expect(has(new RegExp(`^platform_queue_jobs\\{.*queue="${queue}".*state="failed".*\\} 0$`))).toBe(true);
      // The syncs of the tests above ran in this worker: their tasks and the tick completed.
      expect(has(new RegExp(`^platform_job_duration_seconds_count\\{.*queue="${queue}".*outcome="completed".*\\} [1-9]`))).toBe(true);
      expect(has(new RegExp(`^platform_job_failures_total\\{.*queue="${queue}".*\\} 0$`))).toBe(true);
    }
    expect(text).toContain('service="cost-analysis-worker"');
    expect(text).toContain('# TYPE platform_plugin_call_duration_seconds histogram');
  });
});
