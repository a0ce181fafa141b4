import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { rootSampling, tracingConfigured } from './index';

const ROOT = path.resolve(__dirname, '../../..');

describe('tracingConfigured', () => {
  it('is on only with an OTLP endpoint, and off when the SDK or the traces exporter is turned off', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});

describe('rootSampling', () => {
  it("reads a root span's share as the SDK reads OTEL_TRACES_SAMPLER and its argument, and leaves other samplers to the SDK", () => {
    expect(rootSampling({})).toEqual({ name: 'parentbased_always_on', ratio: 1 });
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ name: 'always_on', ratio: 1 });
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toEqual({ name: 'parentbased_always_off', ratio: 0 });
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: '0.5' })).toEqual({ name: 'always_off', ratio: 0 });
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({ name: 'traceidratio', ratio: 0.25 });
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })).toEqual({ name: 'parentbased_traceidratio', ratio: 0.1 });
    // A blank, unreadable or out-of-range argument is 1, the SDK's default.
    for (const arg of [undefined, '', 'x', '-0.1', '1.5']) {
      expect(rootSampling({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', ...(arg !== undefined && { OTEL_TRACES_SAMPLER_ARG: arg }) })).toEqual({ name: 'parentbased_traceidratio', ratio: 1 });
    }
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toBeUndefined();
    expect(rootSampling({ OTEL_TRACES_SAMPLER: 'nonsense' })).toBeUndefined();
  });
});

describe('startTelemetry in a process of its own', () => {
  // The lib bundled as the apps bundle it (node_modules external), then started in a fresh node.
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'telemetry-')), 'telemetry.js');
  beforeAll(() => {
    buildSync({ entryPoints: [path.join(__dirname, 'index.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: file, packages: 'external', logLevel: 'error' });
  });
  const run = (env: Record<string, string>) => {
    const script = `
      const t = require(${JSON.stringify(file)});
      const on = t.startTelemetry('probe');
      require('node:http'); require('pg'); require('ioredis'); require('express');
      const loaded = Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'));
      const mixin = t.traceLogMixin();
      // No auto-instrumentation: none of their packages loaded, pg's and http's functions as they were.
      const instrumented = loaded.filter((k) => /instrumentation-(http|express|pg|ioredis)/.test(k)).length;
      const patched = ['__wrapped', '__original'].some((k) => k in require('pg').Client.prototype.query || k in require('node:http').Server.prototype.emit);
      process.stdout.write(JSON.stringify({ on, enabled: t.tracingEnabled(), loaded: loaded.length, instrumented, patched, inject: t.injectTrace() ?? null, mixin: typeof mixin }));
      t.shutdownTelemetry().then(() => process.exit(0));`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const out = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env: { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), ...env }, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout) as { on: boolean; enabled: boolean; loaded: number; instrumented: number; patched: boolean; inject: unknown; mixin: string };
  };

  it('loads no module of OpenTelemetry when no endpoint is set, or when OTEL_SDK_DISABLED is true', () => {
    for (const env of [{} as Record<string, string>, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }]) {
      expect(run(env)).toEqual({ on: false, enabled: false, loaded: 0, instrumented: 0, patched: false, inject: null, mixin: 'undefined' });
    }
  });

  it('exports with http/protobuf (the default protocol) and http/json to the endpoint, under the service name', async () => {
    const received: { type: string; body: Buffer }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') received.push({ type: String(req.headers['content-type']), body: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const script = `
      const t = require(${JSON.stringify(file)});
      t.startTelemetry('probe-service');
      t.withSpan('probe-span', { attributes: { 'probe.attr': 'x' } }, async () => t.activeTraceIds())
        .then((ids) => { process.stdout.write(JSON.stringify(ids)); return t.shutdownTelemetry(); })
        .then(() => process.exit(0));`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    try {
      for (const protocol of [undefined, 'http/json']) {
        const env = { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...(protocol && { OTEL_EXPORTER_OTLP_PROTOCOL: protocol }) };
        const out = await new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
          let text = '';
          child.stdout.on('data', (d: Buffer) => (text += d));
          child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
        });
        const ids = JSON.parse(out) as { trace_id: string; span_id: string };
        expect(ids.trace_id).toMatch(/^[0-9a-f]{32}$/);
        const last = received.pop()!;
        if (protocol === 'http/json') {
          expect(last.type).toMatch(/^application\/json/);
          const spans = JSON.parse(last.body.toString()).resourceSpans[0];
          expect(spans.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'probe-service' } });
          expect(spans.scopeSpans[0].spans[0]).toMatchObject({ name: 'probe-span', traceId: ids.trace_id, spanId: ids.span_id });
        } else {
          expect(last.type).toBe('application/x-protobuf');
          // Protobuf keeps strings and ids as raw bytes.
          expect(last.body.includes(Buffer.from('probe-span'))).toBe(true);
          expect(last.body.includes(Buffer.from('probe-service'))).toBe(true);
          expect(last.body.includes(Buffer.from(ids.trace_id, 'hex'))).toBe(true);
        }
      }
    } finally {
      server.close();
    }
  });

  it("exports the platform's own spans as the SDK's exporter reads them: ids, parent, kind, times, attributes, status, events; a full queue drops and counts", async () => {
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const script = `
      const t = require(${JSON.stringify(file)});
      t.startTelemetry('probe-service');
      const traced = async () => {
        const rs = t.startRequestSpan({ headers: { traceparent: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', tracestate: 'v=1' } }, 'POST', '/x/1');
        await t.inRequestSpan(rs, async () => {
          const c = t.startClientSpan('SELECT db', { 'db.query.text': 'SELECT $1', 'db.skipped': undefined });
          await new Promise((r) => setTimeout(r, 5));
          t.endSpan(c, Object.assign(new Error('invalid input: "secret-value"'), { code: '22P02' }));
          await t.withSpan('q publish', { kind: 'producer', attributes: { n: 1 } }, async () => { throw new Error('boom'); }).catch(() => {});
        });
        t.endRequestSpan(rs, 'POST', '/x/{id}', 503);
        // The queue (5) full: a batch (the batch size is at most the queue's) goes at once; while its
        // export is under way 5 more are queued and the rest dropped and counted.
        for (let i = 0; i < 12; i++) { const r = t.startRequestSpan({ headers: {} }, 'GET', '/r'); t.endRequestSpan(r, 'GET', undefined, 200); }
      };
      const before = Date.now();
      traced().then(() => {
        const stats = t.spanBufferStats();
        return t.shutdownTelemetry().then(() => process.stdout.write(JSON.stringify({ before, after: Date.now(), stats })));
      }).then(() => process.exit(0));`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    try {
      const env = {
        ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_MAX_QUEUE_SIZE: '5', OTEL_BSP_SCHEDULE_DELAY: '60000',
      };
      // Not spawnSync: the receiver answers from this process' event loop.
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (d: Buffer) => (text += d));
        child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
      });
      const { before, after, stats } = JSON.parse(out) as { before: number; after: number; stats: unknown };
      // 3 spans of the request and 12 roots: 5 exported at once, 5 queued (exported at shutdown), 5 dropped.
      expect(stats).toEqual([{ queued: 5, exported: 5, dropped: 5 }]);
      expect(bodies).toHaveLength(2);
      const rs = JSON.parse(bodies[0]).resourceSpans;
      expect(rs).toHaveLength(1);
      const rest = JSON.parse(bodies[1]).resourceSpans[0].scopeSpans[0].spans as { name: string }[];
      expect(rest.map((s) => s.name)).toEqual(['GET', 'GET', 'GET', 'GET', 'GET']);
      expect(rs[0].resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'probe-service' } });
      expect(rs[0].scopeSpans[0].scope.name).toBe('@platform/telemetry');
      type Json = { name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; traceState?: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes: { key: string; value: Record<string, unknown> }[]; status: { code?: number }; events: { name: string; attributes: { key: string; value: Record<string, unknown> }[] }[] };
      const spans = rs[0].scopeSpans[0].spans as Json[];
      expect(spans.map((s) => s.name)).toEqual(['SELECT db', 'q publish', 'POST /x/{id}', 'GET', 'GET']);
      const [client, producer, srv, root] = spans;
      const attrs = (s: Json) => Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
      expect(srv).toMatchObject({ kind: 2, traceId: 'a'.repeat(32), parentSpanId: 'b'.repeat(16), traceState: 'v=1', status: { code: 2 } });
      expect(attrs(srv)).toEqual({ 'http.request.method': 'POST', 'url.path': '/x/1', 'http.route': '/x/{id}', 'http.response.status_code': 503 });
      expect(client).toMatchObject({ kind: 3, traceId: 'a'.repeat(32), parentSpanId: srv.spanId, status: { code: 2 } });
      expect(attrs(client)).toEqual({ 'db.query.text': 'SELECT $1', 'error.type': '22P02' });
      expect(producer).toMatchObject({ kind: 4, traceId: 'a'.repeat(32), parentSpanId: srv.spanId, status: { code: 2 } });
      expect(producer.events.map((e) => [e.name, attrs(e as Json)])).toEqual([['exception', { 'exception.type': 'Error', 'exception.message': 'boom' }]]);
      expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(root.traceId).not.toBe(spans[4].traceId);
      expect(root.parentSpanId ?? '').toBe('');
      expect(new Set([...spans, ...rest].map((s) => (s as Json).spanId)).size).toBe(10);
      for (const s of spans) {
        expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
        const [start, end] = [Number(BigInt(s.startTimeUnixNano) / 1000n), Number(BigInt(s.endTimeUnixNano) / 1000n)]; // µs
        expect(start).toBeGreaterThanOrEqual(before * 1000 - 2000);
        expect(end).toBeGreaterThanOrEqual(start);
        expect(end).toBeLessThanOrEqual(after * 1000 + 2000);
      }
      // The client span lasted the 5 ms it waited (at least), the server span held it.
      expect(BigInt(client.endTimeUnixNano) - BigInt(client.startTimeUnixNano)).toBeGreaterThanOrEqual(4_000_000n);
      expect(BigInt(srv.startTimeUnixNano) <= BigInt(client.startTimeUnixNano) && BigInt(srv.endTimeUnixNano) >= BigInt(client.endTimeUnixNano)).toBe(true);
      // (the spans: the resource's process.command_args holds this script)
      expect(JSON.stringify([spans, rest])).not.toContain('secret-value');
    } finally {
      server.close();
    }
  });

  it("decides a root request's sampling before the SDK, and follows a caller's traceparent as the parent-based sampler does", () => {
    const script = `
      const t = require(${JSON.stringify(file)});
      t.startTelemetry('probe');
      const req = (headers) => ({ headers });
      const roots = Array.from({ length: 2000 }, () => t.startRequestSpan(req({}), 'POST', '/x'));
      const taken = roots.filter(Boolean);
      const sampledParent = t.startRequestSpan(req({ traceparent: '00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01' }), 'POST', '/x');
      const unsampledParent = t.startRequestSpan(req({ traceparent: '00-' + 'c'.repeat(32) + '-' + 'd'.repeat(16) + '-00' }), 'POST', '/x');
      const probe = t.startRequestSpan(req({}), 'GET', '/healthz');
      const ids = new Set(taken.map((r) => r.ids.trace_id));
      process.stdout.write(JSON.stringify({
        taken: taken.length,
        distinctTraces: ids.size,
        recording: taken.every((r) => r.span.isRecording() && /^[0-9a-f]{32}$/.test(r.ids.trace_id)),
        sampledParent: sampledParent ? { recording: sampledParent.span.isRecording(), trace: sampledParent.ids?.trace_id } : null,
        unsampledParent: unsampledParent ? { recording: unsampledParent.span.isRecording(), ids: unsampledParent.ids ?? null } : null,
        probe: probe ?? null,
      }));
      for (const r of [...taken, sampledParent, unsampledParent].filter(Boolean)) t.endRequestSpan(r, 'POST', '/x', 200);
      t.shutdownTelemetry().then(() => process.exit(0));`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const decide = (sampler: Record<string, string>) => {
      const env = { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '60000', ...sampler };
      const out = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(out.stderr);
      return JSON.parse(out.stdout) as { taken: number; distinctTraces: number; recording: boolean; sampledParent: unknown; unsampledParent: unknown; probe: unknown };
    };
    const followed = { sampledParent: { recording: true, trace: 'a'.repeat(32) }, unsampledParent: { recording: false, ids: null }, probe: null };
    // 10%: about 200 of 2000 roots (binomial, sd 13; the bounds are 6 sd), each a trace of its own.
    const tenth = decide({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    expect(tenth.taken).toBeGreaterThan(120);
    expect(tenth.taken).toBeLessThan(280);
    expect(tenth).toMatchObject({ distinctTraces: tenth.taken, recording: true, ...followed });
    expect(decide({})).toMatchObject({ taken: 2000, distinctTraces: 2000, recording: true, ...followed });
    expect(decide({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' })).toMatchObject({ taken: 0, ...followed });
    // Not parent-based: the caller's flag does not decide; always_off takes nothing, its parent's or not
    // (a request with a parent keeps the decision as its context, an unrecorded span).
    expect(decide({ OTEL_TRACES_SAMPLER: 'always_off' })).toMatchObject({ taken: 0, sampledParent: { recording: false }, unsampledParent: { recording: false, ids: null } });
    // A sampler the platform does not read itself: the SDK decides every request (here its default).
    expect(decide({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatchObject({ taken: 2000, recording: true, ...followed });
  });

  it('switches the context storage off when an unsampled request starts with no sampled one open, never while one is', () => {
    // The draw is made to order (Math.random: 0 samples, 0.99 does not). A store on a new promise (the
    // AsyncLocalStorage's symbol property) is what the storage's promise hooks cost every request.
    const script = `
      const t = require(${JSON.stringify(file)});
      t.startTelemetry('probe');
      let draw = 0;
      Math.random = () => draw;
      const stores = () => Object.getOwnPropertySymbols(Promise.resolve()).filter((k) => k.description === 'kResourceStore').length;
      const req = { headers: {} };
      const traceIn = (rs) => t.inRequestSpan(rs, async () => { await new Promise((r) => setTimeout(r, 20)); return t.activeTraceIds()?.trace_id; });
      (async () => {
        const before = stores();
        const a = t.startRequestSpan(req, 'GET', '/a');
        const inA = traceIn(a);
        draw = 0.99;
        const b = t.startRequestSpan(req, 'GET', '/b'); // unsampled while a is open: the storage stays on
        await null;
        const duringA = stores();
        const aTrace = await inA;
        t.endRequestSpan(a, 'GET', undefined, 200);
        const c = t.startRequestSpan(req, 'GET', '/c'); // unsampled, nothing open: switched off
        await null; // (Node stops the promise hooks a microtask later)
        const afterA = stores();
        draw = 0;
        const d = t.startRequestSpan(req, 'GET', '/d');
        const dTrace = await traceIn(d);
        t.endRequestSpan(d, 'GET', undefined, 200);
        process.stdout.write(JSON.stringify({ before, sampled: [Boolean(a), Boolean(b), Boolean(c), Boolean(d)], duringA, afterA, aKept: aTrace === a.ids.trace_id, dKept: dTrace === d.ids.trace_id }));
        t.shutdownTelemetry().then(() => process.exit(0));
      })();`;
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
    const env = { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '60000', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' };
    const out = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env, encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    expect(JSON.parse(out.stdout)).toEqual({ before: 0, sampled: [true, false, false, true], duringA: 1, afterA: 0, aKept: true, dKept: true });
  });

  it('starts the SDK with an endpoint, and no auto-instrumentation (the platform makes its own spans)', () => {
    const r = run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(r).toMatchObject({ on: true, enabled: true, mixin: 'function', instrumented: 0, patched: false });
    expect(r.loaded).toBeGreaterThan(10);
  });

  it("gives the platform's log lines the active span's ids while tracing is on, and nothing while it is off", () => {
    // libs/core's logger bundled with this lib, as an app bundles them.
    const logFile = path.join(path.dirname(file), 'logger.js');
    buildSync({
      stdin: { contents: `export { createLogger } from '@platform/core'; export * from './index';`, resolveDir: __dirname, loader: 'ts' },
      bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: logFile, packages: 'external', logLevel: 'error',
      tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    });
    const script = `
      const t = require(${JSON.stringify(logFile)});
      t.startTelemetry('probe');
      const log = t.createLogger('probe', 'info');
      log.info('outside');
      t.withSpan('probe-span', {}, async () => { log.info({ ids: t.activeTraceIds() ?? null }, 'inside'); }).then(() => process.exit(0));`;
    const lines = (env: Record<string, string>) => {
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_') && k !== 'JEST_WORKER_ID'));
      const out = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env: { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), LOG_SYNC: 'true', ...env }, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`exit ${out.status}: ${out.stderr}`);
      const lines = out.stdout.trim().split('\n');
      expect({ lines: lines.length, stderr: out.stderr }).toEqual({ lines: 2, stderr: '' });
      // in the order of the calls, whatever order the destination flushed them in
      const byMsg = new Map(lines.map((l) => JSON.parse(l) as Record<string, unknown>).map((l) => [l.msg, l]));
      return ['outside', 'inside'].map((msg) => byMsg.get(msg) ?? {});
    };
    const [outside, inside] = lines({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_EXPORTER: 'otlp' });
    expect(outside.trace_id).toBeUndefined();
    const ids = inside.ids as { trace_id: string; span_id: string };
    expect(ids.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(inside).toMatchObject({ msg: 'inside', trace_id: ids.trace_id, span_id: ids.span_id });
    const off = lines({});
    expect(off.map((l) => Object.keys(l).sort())).toEqual([
      ['level', 'msg', 'name', 'service', 'time'],
      ['ids', 'level', 'msg', 'name', 'service', 'time'],
    ]);
    expect(off[1].ids).toBeNull();
  });
});
