// A real OTLP/HTTP receiver for the trace tests: accepts what an OpenTelemetry exporter POSTs to
// /v1/traces with OTEL_EXPORTER_OTLP_PROTOCOL=http/json and keeps every span, with its service.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  attributes?: OtlpAttribute[];
  events?: { name: string; attributes?: OtlpAttribute[] }[];
  links?: { traceId: string; spanId: string }[];
  /** The resource's service.name. */
  service: string;
}

export interface OtlpReceiver {
  /** The value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: OtlpSpan[];
  /** Every body received, as sent (to look for a string in all of it). */
  bodies: string[];
  contentTypes: string[];
  close(): void;
}

/** An attribute's value as text (`stringValue`, `intValue`, ...), or undefined. */
export function spanAttribute(s: Pick<OtlpSpan, 'attributes'>, key: string): string | undefined {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : String(Object.values(v)[0]);
}

/** A span's name, attributes and events as one text (to look for a value that must not be there). */
export function spanText(s: OtlpSpan): string {
  const values = (attrs: OtlpAttribute[] | undefined) => (attrs ?? []).map((a) => JSON.stringify(a.value));
  return [s.name, ...values(s.attributes), ...(s.events ?? []).flatMap((e) => [e.name, ...values(e.attributes)])].join(' ');
}

export function otlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const text = Buffer.concat(chunks).toString('utf8');
      bodies.push(text);
      contentTypes.push(String(req.headers['content-type']));
      const body = JSON.parse(text) as { resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[] }[] };
      for (const rs of body.resourceSpans) {
        const service = String(rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue);
        for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        spans,
        bodies,
        contentTypes,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

/** The environment that turns tracing on towards `receiver`, exporting every 100 ms as JSON. */
export function otlpEnv(receiver: Pick<OtlpReceiver, 'url'>): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: '',
    OTEL_SDK_DISABLED: '',
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
  };
}

/** A free TCP port on 127.0.0.1 (for a process the test starts). */
export async function freeTcpPort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A bundled entry (dist-like main.js / worker.js) run as its own process with `env` added to this one's,
 * its stdout kept line by line; resolves once `ready(lines)` says it started (20 s at most).
 */
export async function startBundledProcess(file: string, env: Record<string, string>, ready: (lines: string[]) => boolean | Promise<boolean>) {
  const { spawn } = await import('node:child_process');
  const path = await import('node:path');
  const lines: string[] = [];
  const child = spawn(process.execPath, [file], {
    // A worker's /metrics on a free port (METRICS_PORT 0): tests run side by side.
    env: { ...process.env, NODE_PATH: path.resolve(__dirname, '../../../node_modules'), LOG_SYNC: 'true', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let rest = '';
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  });
  for (const end = Date.now() + 20_000; !(await ready(lines)); ) {
    if (child.exitCode !== null) throw new Error(`${file} exited early (${child.exitCode})`);
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`${file} did not start`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, lines };
}
