// Traces (OpenTelemetry), configured only through the standard OTEL_* environment variables
// (docs/decisions/observability.md). Without an OTLP endpoint nothing of OpenTelemetry is loaded:
// every helper below checks one module variable and returns, so the request path pays nothing.
import type * as OtelApi from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';

type Api = typeof OtelApi;
type Span = OtelApi.Span;

/** W3C trace context as text (`traceparent`, `tracestate`): what a queued job carries. */
export type TraceCarrier = Record<string, string>;

/** The ids a log line carries while tracing is on. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** The server span of one request (opaque outside this lib). */
export interface RequestSpan {
  readonly span: Span;
  readonly ids: TraceIds;
}

/** The field a queued job's data carries its trace context in. */
export const TRACE_FIELD = '_trace';

/** Requests that are not traced: probes and scrapes (every few seconds, from every replica). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const SERVER_SPAN = Symbol.for('platform.telemetry.serverSpan');

let api: Api | undefined;
let sdk: { shutdown(): Promise<void> } | undefined;

const truthy = (v: string | undefined) => (v ?? '').trim().toLowerCase() === 'true';
const nonEmpty = (v: string | undefined) => Boolean(v && v.trim());

/**
 * Whether the environment asks for traces: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (truthy(env.OTEL_SDK_DISABLED)) return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (exporters.includes('none')) return false;
  return nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) || nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** True once startTelemetry has started the SDK in this process. */
export function tracingEnabled(): boolean {
  return api !== undefined;
}

const pathOf = (url: string | undefined) => {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
};

/** Rewrites every string attribute of a span (the SDK's span keeps them readable until it ends). */
function rewriteAttributes(span: Span, rewrite: (value: string) => string) {
  const attributes = (span as unknown as { attributes?: Record<string, unknown> }).attributes;
  if (!attributes) return;
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value !== 'string') continue;
    const next = rewrite(value);
    if (next !== value) span.setAttribute(key, next);
  }
}

/** An outgoing URL without its query and user info (an SNS SubscribeURL's token, a signed URL's signature). */
const withoutQuery = (value: string) => value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@?#]*@/i, '$1').replace(/[?#].*$/s, '');

/**
 * Starts the OpenTelemetry SDK for Node when the environment asks for traces (tracingConfigured):
 * OTLP export (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`, the default, `http/json` or `grpc`),
 * the sampler of `OTEL_TRACES_SAMPLER`, W3C trace context, and the instrumentations of http, express,
 * pg and ioredis. Must run before those modules are loaded: each entry point imports its app's
 * `telemetry.ts` first. `service` names the process unless `OTEL_SERVICE_NAME` (or `service.name` in
 * `OTEL_RESOURCE_ATTRIBUTES`) does. Returns whether tracing is on.
 */
export function startTelemetry(service: string): boolean {
  if (api) return true;
  if (!tracingConfigured()) return false;
  const env = process.env;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const otel = require('@opentelemetry/api') as Api;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const named = nonEmpty(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const instance = new NodeSDK({
    ...(named ? {} : { serviceName: service }),
    // Metrics stay Prometheus' (/metrics) and logs stdout's, unless the standard variables ask for more.
    ...(nonEmpty(env.OTEL_METRICS_EXPORTER) ? {} : { metricReaders: [] }),
    ...(nonEmpty(env.OTEL_LOGS_EXPORTER) ? {} : { logRecordProcessors: [] }),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has(pathOf(req.url)),
        requestHook: (span, req) => {
          // An incoming request's span is kept for libs/http, which replaces the path's secret
          // segments in its attributes (requestSpan) and names it after the operation.
          if (!('setHeader' in req)) (req as unknown as Record<symbol, Span>)[SERVER_SPAN] = span;
          else rewriteAttributes(span, withoutQuery);
        },
      }),
      // Express carries the documents, health and 404s; operations and webhooks run ahead of it (their
      // server span is http's). Only its routers and handlers, not each middleware.
      new ExpressInstrumentation({ ignoreLayersType: ['middleware' as never] }),
      // Statements as text with their $n placeholders; never the bound values.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // The command's name only: arguments hold keys and values (a job's data, through EVALSHA).
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command: string) => command }),
    ],
  });
  instance.start();
  api = otel;
  sdk = instance;
  return true;
}

/** Exports what is left and stops the SDK (at most `timeoutMs`); nothing when tracing is off. */
export async function shutdownTelemetry(timeoutMs = 3000): Promise<void> {
  const s = sdk;
  if (!s) return;
  sdk = undefined;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([s.shutdown().catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
}

const idsOf = (span: Span): TraceIds => {
  const c = span.spanContext();
  return { trace_id: c.traceId, span_id: c.spanId };
};

/** The active span's ids (for a log line), or undefined when tracing is off or no span is active. */
export function activeTraceIds(): TraceIds | undefined {
  const span = api?.trace.getActiveSpan();
  if (!span) return undefined;
  const c = span.spanContext();
  return api!.isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : undefined;
}

/** A pino `mixin` adding the active span's ids to every line, or undefined when tracing is off. */
export function traceLogMixin(): (() => object) | undefined {
  if (!api) return undefined;
  return () => activeTraceIds() ?? {};
}

/**
 * The server span of an incoming request, or undefined (tracing off, an untraced path): its attributes
 * get `redactedPath` wherever they held `rawPath` (a webhook URL's access key never leaves the process),
 * and lose the query string, as the log lines do (the API takes its input in bodies; a query is a
 * caller's mistake, which may hold a secret).
 */
export function requestSpan(req: IncomingMessage, rawPath: string, redactedPath: string): RequestSpan | undefined {
  if (!api) return undefined;
  const span = (req as unknown as Record<symbol, Span | undefined>)[SERVER_SPAN];
  if (!span) return undefined;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const query = q < 0 ? '' : url.slice(q + 1);
  if ((rawPath !== redactedPath && rawPath) || query) {
    rewriteAttributes(span, (v) => {
      let out = query ? (v === query ? '' : v.split(`?${query}`).join('')) : v;
      if (rawPath !== redactedPath && rawPath) out = out.split(rawPath).join(redactedPath);
      return out;
    });
  }
  return { span, ids: idsOf(span) };
}

/** Names a request's server span after what answered it (`POST /identity/v2/token/issue`). */
export function nameRequestSpan(rs: RequestSpan, method: string | undefined, route: string) {
  rs.span.updateName(`${method ?? 'GET'} ${route}`);
  rs.span.setAttribute('http.route', route);
}

/** The current trace context as text, to carry in a queued job; undefined when tracing is off. */
export function injectTrace(): TraceCarrier | undefined {
  if (!api) return undefined;
  const carrier: TraceCarrier = {};
  api.propagation.inject(api.context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

export interface SpanOptions {
  kind?: 'internal' | 'producer' | 'consumer';
  attributes?: Record<string, string | number | boolean | undefined>;
  /** The trace context the span continues (a job's carrier); otherwise the active one. */
  parent?: TraceCarrier;
  /** Other trace contexts the span relates to (the deliveries of a batch). */
  links?: (TraceCarrier | undefined)[];
}

/**
 * Runs `fn` inside a new span (its child spans, SQL and Redis included, nest under it), ending it when
 * `fn` settles and marking it failed when `fn` throws. With tracing off it is `fn()`.
 */
export function withSpan<T>(name: string, o: SpanOptions, fn: () => Promise<T>): Promise<T> {
  const a = api;
  if (!a) return fn();
  const kind = o.kind === 'producer' ? a.SpanKind.PRODUCER : o.kind === 'consumer' ? a.SpanKind.CONSUMER : a.SpanKind.INTERNAL;
  const parent = o.parent ? a.propagation.extract(a.ROOT_CONTEXT, o.parent) : a.context.active();
  const links = (o.links ?? [])
    .filter((c): c is TraceCarrier => Boolean(c?.traceparent))
    .map((c) => a.trace.getSpanContext(a.propagation.extract(a.ROOT_CONTEXT, c)))
    .filter((c): c is OtelApi.SpanContext => Boolean(c && a.isSpanContextValid(c)))
    .map((context) => ({ context }));
  const attributes = Object.fromEntries(Object.entries(o.attributes ?? {}).filter(([, v]) => v !== undefined)) as OtelApi.Attributes;
  const tracer = a.trace.getTracer('@platform/telemetry');
  return tracer.startActiveSpan(name, { kind, attributes, links }, parent, async (span) => {
    try {
      return await fn();
    } catch (e) {
      span.recordException({ name: (e as Error)?.name ?? 'Error', message: String((e as Error)?.message ?? e).slice(0, 500) });
      span.setStatus({ code: a.SpanStatusCode.ERROR });
      throw e;
    } finally {
      span.end();
    }
  });
}
