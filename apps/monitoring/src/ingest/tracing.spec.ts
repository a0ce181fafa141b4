// Traces end to end (issue #21): the monitoring app and its worker as real processes (bundled as the
// build bundles them, so the SDK starts before pg, ioredis, http and express load), exporting OTLP/HTTP
// JSON to a receiver this test runs. A webhook post carrying a `traceparent` continues that trace
// through the app, the queue and the worker down to the SQL statements, with no secret and no bound
// value in any attribute.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { bearer, freeTcpPort, otlpEnv, otlpReceiver, spanAttribute, spanText, testKeys, TEST_REDIS_URL, startBundledProcess, type OtlpReceiver, type OtlpSpan } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { buildEntry, killProcess } from './test-processes';

const attr = spanAttribute;

describe('traces through the monitoring app, the queue and the worker', () => {
  let t: TestMonitoring;
  let receiver: OtlpReceiver;
  const children: ChildProcess[] = [];
  let base: string;
  let app: { child: ChildProcess; lines: string[] };

  beforeAll(async () => {
    const [mainFile, workerFile] = [buildEntry('main'), buildEntry('worker')];
    receiver = await otlpReceiver();
    t = await createTestMonitoring({ worker: false, plugins: true });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    const port = await freeTcpPort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: t.db.url,
      PLUGIN_DATABASE_URL: t.pluginTable!.db.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: t.queuePrefix,
      JWT_PUBLIC_KEY: testKeys.publicPem,
      LOG_LEVEL: 'info',
      ...otlpEnv(receiver),
    };
    app = await startBundledProcess(mainFile, { ...env, PORT: String(port) }, () =>
      fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    );
    children.push(app.child);
    const worker = await startBundledProcess(workerFile, env, (lines) => lines.some((l) => l.startsWith('worker ready')));
    children.push(worker.child);
  }, 120_000);

  afterAll(async () => {
    for (const c of children) await killProcess(c, 'SIGTERM');
    receiver?.close();
    await t?.close();
  });

  it('continues an incoming traceparent from the webhook post to the worker and its SQL, with no secret or value in any attribute', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'traced', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body as { webhook_url: string; access_key: string; webhook_id: string };
    const accessKey = new URL(w.webhook_url).pathname.split('/')[5];
    expect(accessKey.length).toBeGreaterThan(10);

    const traceId = randomBytes(16).toString('hex');
    const parentSpanId = randomBytes(8).toString('hex');
    // A value that only the payload holds: it reaches the database as a bound parameter, never an attribute.
    const marker = `marker-${randomBytes(8).toString('hex')}`;
    // A query string (the API takes none: a caller's mistake) is dropped from spans as from logs.
    const query = `token=${randomBytes(8).toString('hex')}`;
    const res = await fetch(`${base}${new URL(w.webhook_url).pathname}?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${parentSpanId}-01`, tracestate: 'vendor=abc' },
      body: JSON.stringify({ event_key: marker, title: `title ${marker}`, description: marker }),
    });
    expect(res.status).toBe(200);
    await t.waitForDeliveries(1);

    // Spans of both processes under the caller's trace, the worker's SQL among them.
    const ours = () => receiver.spans.filter((s) => s.traceId === traceId);
    const isSql = (s: OtlpSpan) => (attr(s, 'db.system') ?? attr(s, 'db.system.name')) === 'postgresql';
    const statement = (s: OtlpSpan) => String(attr(s, 'db.statement') ?? attr(s, 'db.query.text'));
    const insert = (s: OtlpSpan) => s.service === 'monitoring-worker' && isSql(s) && /INSERT/i.test(statement(s));
    // The job's consumer span ends after its INSERTs (once the job completes): it may come in the next export.
    const isConsumer = (s: OtlpSpan) => s.service === 'monitoring-worker' && s.name === `${t.config.ingest.queue} process`;
    for (const end = Date.now() + 15_000; !(ours().some(insert) && ours().some(isConsumer)) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    const spans = ours();
    const byId = new Map(spans.map((s) => [s.spanId, s]));

    // The app: its server span is the caller's span's child, named after the route, the path's key hidden.
    const server = spans.find((s) => s.service === 'monitoring' && s.kind === 2);
    expect(server).toBeDefined();
    expect(server!.parentSpanId).toBe(parentSpanId);
    expect(server!.name).toBe('POST /monitoring/v1/webhook/{webhook_id}/{access_key}/events');
    expect(spanText(server!)).toContain(`/monitoring/v1/webhook/${w.webhook_id}/`);
    // The app looked the webhook up in SQL, under its server span; and queued the job (producer span).
    const appSql = spans.filter((s) => s.service === 'monitoring' && isSql(s));
    expect(appSql.length).toBeGreaterThan(0);
    const producer = spans.find((s) => s.service === 'monitoring' && s.kind === 4);
    expect(producer?.name).toBe(`${t.config.ingest.queue} publish`);

    // The worker: the job's consumer span continues the trace from the producer; the delivery's span
    // from the request; the INSERTs are children of the worker's spans.
    const consumer = spans.find(isConsumer);
    expect(consumer).toBeDefined();
    expect(consumer!.parentSpanId).toBe(producer!.spanId);
    const delivery = spans.find((s) => s.service === 'monitoring-worker' && s.name === 'webhook delivery store');
    expect(delivery?.parentSpanId).toBe(server!.spanId);
    const inserts = spans.filter(insert);
    expect(inserts.length).toBeGreaterThan(0);
    for (const s of inserts) expect(byId.get(s.parentSpanId!)?.service).toBe('monitoring-worker');
    // Statements as text with placeholders.
    expect(inserts.some((s) => /\$1/.test(statement(s)))).toBe(true);

    // Nothing anywhere carries the access key or a payload value: names, attributes, events, of every span received.
    const everything = receiver.bodies.join('\n');
    for (const secret of [accessKey, marker, query]) {
      expect(everything).not.toContain(secret);
      for (const s of receiver.spans) expect(spanText(s)).not.toContain(secret);
    }
    expect(receiver.contentTypes.every((c) => c.startsWith('application/json'))).toBe(true);

    // The request's log line carries its trace and server span ids.
    const line = app.lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && String(l.path).includes(w.webhook_id));
    expect(line).toMatchObject({ trace_id: traceId, span_id: server!.spanId, status: 200 });
    expect(JSON.stringify(line)).not.toContain(accessKey);
  }, 60_000);

  it("keeps a caller's decision not to sample: nothing of its request, job or statements is exported, and its request line has no trace ids", async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'unsampled', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body as { webhook_url: string; webhook_id: string };
    const path = new URL(w.webhook_url).pathname;
    const stored = Number((await t.db.pool.query('SELECT count(*) AS n FROM event')).rows[0].n);
    const before = receiver.spans.length;
    const post = (flags: string) => {
      const traceId = randomBytes(16).toString('hex');
      return fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}` },
        body: JSON.stringify({ event_key: `k-${traceId}`, title: 't', description: 'd' }),
      }).then((r) => ({ status: r.status, traceId }));
    };
    const unsampled = await post('00');
    expect(unsampled.status).toBe(200);
    await t.waitForDeliveries(stored + 1);
    // A sampled request after it: once its worker's statements are exported, so would the first's be.
    const sampled = await post('01');
    await t.waitForDeliveries(stored + 2);
    for (const end = Date.now() + 15_000; !receiver.spans.some((s) => s.traceId === sampled.traceId && s.service === 'monitoring-worker' && /INSERT/.test(String(attr(s, 'db.query.text')))) && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const since = receiver.spans.slice(before);
    expect(since.some((s) => s.traceId === sampled.traceId)).toBe(true);
    // Neither under the caller's trace nor as a trace of its own (a job started afresh, its SQL).
    expect(since.filter((s) => s.traceId !== sampled.traceId).map((s) => `${s.service} ${s.name}`)).toEqual([]);
    const line = app.lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request' && String(l.path).includes(w.webhook_id));
    expect(line).toHaveLength(2);
    expect(line[0]).not.toHaveProperty('trace_id');
    expect(line[1]).toHaveProperty('trace_id', sampled.traceId);
  }, 60_000);
});
