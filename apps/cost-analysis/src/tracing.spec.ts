// Traces end to end (issue #21) in cost-analysis: the app and the collection worker as real processes
// (bundled as the build bundles them), exporting OTLP/HTTP JSON to a receiver this test runs. A sync
// carrying a `traceparent` continues that trace through the app, the queue and the worker's task down
// to its SQL statements, with no collected value and no URL query (a signature) in any attribute.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { bearer, freeTcpPort, otlpEnv, otlpReceiver, spanAttribute, spanText, startBundledProcess, testKeys, waitFor, type OtlpReceiver, type OtlpSpan } from '@platform/testing';
import { COLLECT_QUEUE } from './collector/queue';
import { createTestCostAnalysis, serveFiles } from './test-support';

const ROOT = path.resolve(__dirname, '../../..');

/** src/<entry>.ts bundled as the build bundles it, under the repository (Prisma's client imports its runtime as ESM: node_modules must be up the tree). */
function bundle(entry: 'main' | 'worker'): string {
  mkdirSync(path.join(ROOT, 'tmp'), { recursive: true });
  const outfile = path.join(mkdtempSync(path.join(ROOT, 'tmp', `cost-${entry}-`)), `${entry}.js`);
  buildSync({
    entryPoints: [path.join(__dirname, `${entry}.ts`)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    packages: 'external',
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    nodePaths: [path.join(ROOT, 'node_modules')],
    logLevel: 'error',
  });
  return outfile;
}

describe('traces through the cost-analysis app, the queue and the collection worker', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let receiver: OtlpReceiver;
  const children: ChildProcess[] = [];
  let base: string;
  let appLines: string[] = [];
  // A value only the collected file holds: it reaches the database as a bound parameter, never an attribute.
  const marker = `product-${randomBytes(8).toString('hex')}`;
  // A signed URL's signature: the download's span keeps its URL without the query.
  const signature = `sig${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    const [mainFile, workerFile] = [bundle('main'), bundle('worker')];
    receiver = await otlpReceiver();
    t = await createTestCostAnalysis();
    files = await serveFiles({ [`/costs.csv?signature=${signature}`]: `cost,currency,provider,product,year,month,day\n1.5,USD,aws,${marker},2024,1,2\n2.5,USD,aws,${marker},2024,1,3\n` });
    const port = await freeTcpPort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: t.config.databaseUrl,
      REDIS_URL: t.config.redisUrl,
      QUEUE_PREFIX: t.config.queuePrefix,
      DIRECTORY_PREFIX: t.config.directoryPrefix,
      ALLOW_PRIVATE_URLS: 'true',
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
});
