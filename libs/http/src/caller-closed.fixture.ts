// Run by caller-closed.spec.ts as a process of its own (bundled as the apps are, tracing on from the
// OTEL_* variables, every request sampled): a request to an Express route whose caller leaves before
// the answer. Its server span must still end and be exported, with status 499.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@platform/core';
import { shutdownTelemetry, startTelemetry } from '@platform/telemetry';
import { createServiceApp } from './index';

async function main() {
  if (!startTelemetry('http-closed-fixture')) throw new Error('tracing is not configured');
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => (arrived = resolve));
  const app = createServiceApp({
    service: 'demo',
    logger: createLogger('demo', 'silent'),
    operations: [],
    routes: (a) => a.get('/demo/v1/slow', () => arrived()), // never answers
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const client = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/demo/v1/slow`);
  client.on('error', () => {});
  await arrival;
  client.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200));
  server.close();
  await shutdownTelemetry();
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e));
  process.exit(1);
});
