// A request to an Express route whose caller leaves before the answer (a download cut short): Node then
// emits 'close' and never 'finish'. The request still gets its one request line and its metrics, with
// status 499, and its server span ends and is exported (an open span would also keep the trace context
// storage of libs/telemetry switched on for the rest of the process).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@platform/core';
import { bundleEntry, otlpEnv, otlpReceiver, spanAttribute, waitFor } from '@platform/testing';
import { createServiceApp } from './index';

const ROOT = path.resolve(__dirname, '../../..');

describe('a caller that leaves before the answer', () => {
  it('gets one request line and one count with status 499; an answered request still one line with its status', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const app = createServiceApp({
      service: 'demo',
      logger: createLogger('demo', 'info', sink),
      operations: [],
      routes: (a) => {
        a.get('/demo/v1/slow', () => arrived()); // never answers
        a.get('/demo/v1/fast', (_req, res) => void res.json({}));
      },
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const client = http.get(`${base}/demo/v1/slow`);
      client.on('error', () => {});
      await arrival;
      client.destroy();
      const requestLines = () => lines.filter((l) => l.msg === 'request');
      await waitFor(async () => requestLines().length === 1, 5000, 'the request line');
      expect(requestLines()[0]).toMatchObject({ method: 'GET', path: '/demo/v1/slow', status: 499 });

      expect((await fetch(`${base}/demo/v1/fast`)).status).toBe(200);
      await waitFor(async () => requestLines().length === 2, 5000, 'the second request line');
      await new Promise((resolve) => setTimeout(resolve, 100)); // a second line for the same request would be here by now
      expect(requestLines().slice(1)).toEqual([expect.objectContaining({ path: '/demo/v1/fast', status: 200 })]);

      const metrics = await (await fetch(`${base}/metrics`)).text();
      const counted = metrics.split('\n').filter((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('status="499"'));
      expect(counted).toHaveLength(1);
      expect(counted[0].endsWith(' 1')).toBe(true);
    } finally {
      server.close();
    }
  });

  it('ends and exports its server span, with status 499', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'http-closed-'));
    const receiver = await otlpReceiver();
    try {
      const file = bundleEntry(path.join(__dirname, 'caller-closed.fixture.ts'), path.join(dir, 'fixture.js'));
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', env: { ...clean, NODE_PATH: path.join(ROOT, 'node_modules'), ...otlpEnv(receiver), OTEL_TRACES_SAMPLER: 'always_on' } });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      await waitFor(async () => receiver.spans.some((s) => spanAttribute(s, 'url.path') === '/demo/v1/slow'), 5000, 'the span');
      const span = receiver.spans.find((s) => spanAttribute(s, 'url.path') === '/demo/v1/slow')!;
      expect(span.kind).toBe(2);
      expect(spanAttribute(span, 'http.response.status_code')).toBe('499');
    } finally {
      receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
