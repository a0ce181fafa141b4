// Traces (OpenTelemetry), configured only through the standard OTEL_* environment variables
// (docs/decisions/observability.md). Without an OTLP endpoint nothing of OpenTelemetry is loaded:
// every helper below checks one module variable and returns, so the request path pays nothing.
// With it, the spans are the platform's own, made at its boundaries (no auto-instrumentation): a
// request that the sampler does not take enters no context and makes no span. The spans are of a type
// of our own (span.ts), queued in our own bounded buffer (buffer.ts) and exported by the SDK's
// exporters (tracer.ts): issue #31, third round. The context storage is ours (context.ts), switched
// off while no traced work is open (fourth round).
import type * as OtelApi from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import { PlatformContextManager } from './context';
import { PlatformSpan } from './span';
import { childOf, exportersFromEnv, makeShared, rootSpan, standardSampler, startSpan, type Tracing } from './tracer';

export { SpanBuffer, bufferOptionsFromEnv, type BatchExporter, type BufferOptions } from './buffer';

type Api = typeof OtelApi;
type Span = OtelApi.Span;

/** W3C trace context as text (`traceparent`, `tracestate`): what a queued job carries. */
export type TraceCarrier = Record<string, string>;

/** The ids a log line carries while tracing is on. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** The server span of one request (opaque outside this lib); `ids` only when it is sampled. */
export interface RequestSpan {
  readonly span: Span;
  readonly ids: TraceIds | undefined;
  readonly context: OtelApi.Context;
}

/** A span of the platform's own (a statement, a command, an outgoing call), ended by endSpan. */
export type ClientSpan = Span;

/** The field a queued job's data carries its trace context in. */
export const TRACE_FIELD = '_trace';

/** Requests that are not traced: probes and scrapes (every few seconds, from every replica). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

let api: Api | undefined;
let tracing: Tracing | undefined;
let sdk: { shutdown(): Promise<void> } | undefined;
/** The context manager (context.ts): its storage switched off while no traced work is open. */
let contexts: PlatformContextManager | undefined;
/**
 * The share of root requests (no parent in their headers) that the sampler of `OTEL_TRACES_SAMPLER`
 * takes, when that sampler is one of the six standard ones; undefined otherwise (another sampler: the
 * SDK decides every request). See rootSampling.
 */
let rootRatio: number | undefined;
/** The headers the propagators read: a request carrying any of them has its parent's decision to follow. */
let propagationFields: string[] = [];

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

const SAMPLERS = ['always_on', 'always_off', 'parentbased_always_on', 'parentbased_always_off', 'traceidratio', 'parentbased_traceidratio'];

/**
 * What `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG`) decide for a root span, as the SDK reads
 * them: `name` the sampler (the SDK's default, `parentbased_always_on`, when unset) and `ratio` the share
 * of roots it takes (an argument that is blank, not a number or outside [0, 1] is 1, as the SDK has it).
 * Undefined for any other value: the SDK then decides alone.
 */
export function rootSampling(env: NodeJS.ProcessEnv = process.env): { name: string; ratio: number } | undefined {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim() || 'parentbased_always_on';
  if (!SAMPLERS.includes(name)) return undefined;
  if (name.endsWith('always_on')) return { name, ratio: 1 };
  if (name.endsWith('always_off')) return { name, ratio: 0 };
  const arg = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const ratio = arg === '' ? NaN : Number(arg);
  return { name, ratio: Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1 };
}

/** True once startTelemetry has started the SDK in this process. */
export function tracingEnabled(): boolean {
  return api !== undefined;
}

/**
 * Starts the OpenTelemetry SDK for Node when the environment asks for traces (tracingConfigured):
 * OTLP export through the SDK's batch span processor (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`,
 * the default, `http/json` or `grpc`; `OTEL_BSP_*`), the sampler of `OTEL_TRACES_SAMPLER`, W3C trace
 * context, and no instrumentation: the platform makes its own spans at its boundaries (a request in
 * libs/http, a queue hop in libs/queue, a statement in libs/db, a Redis command, an outgoing GET in
 * libs/net, a plugin call in libs/plugin). `service` names the process unless `OTEL_SERVICE_NAME` (or
 * `service.name` in `OTEL_RESOURCE_ATTRIBUTES`) does. Returns whether tracing is on.
 */
export function startTelemetry(service: string): boolean {
  if (api) return true;
  if (!tracingConfigured()) return false;
  const env = process.env;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const otel = require('@opentelemetry/api') as Api;
  const { NodeSDK, tracing: sdkTracing } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sampling = rootSampling(env);
  const named = nonEmpty(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  // The SDK's tracer provider only names the resource (a probe span's, below): its processor exports nothing.
  const probe = { onStart() {}, onEnd() {}, forceFlush: async () => {}, shutdown: async () => {} };
  const manager = new PlatformContextManager(otel.ROOT_CONTEXT);
  const instance = new NodeSDK({
    contextManager: manager,
    ...(named ? {} : { serviceName: service }),
    // Metrics stay Prometheus' (/metrics) and logs stdout's, unless the standard variables ask for more.
    ...(nonEmpty(env.OTEL_METRICS_EXPORTER) ? {} : { metricReaders: [] }),
    ...(nonEmpty(env.OTEL_LOGS_EXPORTER) ? {} : { logRecordProcessors: [] }),
    instrumentations: [],
    spanProcessors: [probe],
    sampler: new sdkTracing.AlwaysOnSampler(),
  });
  instance.start();
  const resource = (otel.trace.getTracer('@platform/telemetry').startSpan('resource') as unknown as { resource: unknown }).resource;
  const exporters = exportersFromEnv(sdkTracing, env, (m) => otel.diag.warn(m), resource);
  const { shared, buffers } = makeShared(otel, resource, exporters, env);
  const { sampler, parentBased } = standardSampler(sdkTracing, sampling?.name, sampling?.ratio ?? 1);
  api = otel;
  contexts = manager;
  sdk = { shutdown: () => Promise.all([...buffers.map((b) => b.shutdown()), instance.shutdown()]).then(() => {}) };
  tracing = { api: otel, sampler, parentBased, shared, buffers };
  rootRatio = sampling?.ratio;
  propagationFields = otel.propagation.fields();
  return true;
}

/** Spans queued, handed to the exporter and dropped (queue full) by each exporter's buffer since the start; [] when tracing is off. */
export function spanBufferStats(): { queued: number; exported: number; dropped: number }[] {
  return (tracing?.buffers ?? []).map((b) => ({ queued: b.queued, exported: b.exported, dropped: b.dropped }));
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
  if (span instanceof PlatformSpan) return { trace_id: span.traceId, span_id: span.spanId }; // ids made valid
  const c = span.spanContext();
  return api!.isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : undefined;
}

/** A pino `mixin` adding the active span's ids to every line, or undefined when tracing is off. */
export function traceLogMixin(): (() => object) | undefined {
  if (!api) return undefined;
  return () => activeTraceIds() ?? {};
}

/**
 * The server span of an incoming request when the sampler takes it. Else undefined (tracing off, a
 * probe, a request the sampler leaves out: the cheap path, no context entered, no span), except when
 * the caller's `traceparent` said "not sampled": that decision is kept as context (an unrecorded span)
 * so that what the request queues or calls is not sampled either. The decision continues the caller's
 * `traceparent` (a parent-based sampler follows its flag). `path` is the request's path as the log line
 * shows it: secret segments replaced, no query string.
 *
 * A root request (none of the propagators' headers) under a standard sampler is decided here, before
 * the SDK is called: one draw against the sampler's ratio (what a trace-id ratio amounts to for a new
 * trace id). One that is left out costs the draw and nothing of the SDK (no header extraction, no ids,
 * no span object); one that is taken is made by the SDK, its sampler told to take it (issue #31).
 */
export function startRequestSpan(req: IncomingMessage, method: string, path: string): RequestSpan | undefined {
  const a = api;
  if (!a || UNTRACED_PATHS.has(path)) return undefined;
  if (rootRatio !== undefined && isRoot(req)) {
    if (!(Math.random() < rootRatio)) return untraced();
    const span = rootSpan(tracing!, method, a.SpanKind.SERVER, { 'http.request.method': method, 'url.path': path });
    return held({ span, ids: { trace_id: span.traceId, span_id: span.spanId }, context: a.trace.setSpan(a.ROOT_CONTEXT, span) });
  }
  const parent = a.propagation.extract(a.ROOT_CONTEXT, req.headers);
  const span = startSpan(tracing!, method, a.SpanKind.SERVER, parent);
  if (!span.isRecording()) return parent === a.ROOT_CONTEXT || !a.trace.getSpan(parent) ? untraced() : held({ span, ids: undefined, context: a.trace.setSpan(parent, span) });
  return held(recorded(a, span, method, path, parent));
}

/** A request that carries a context: held open until endRequestSpan (the storage stays on meanwhile). */
function held(rs: RequestSpan): RequestSpan {
  contexts?.hold();
  return rs;
}

/** A request that carries none: the storage is switched off if no traced work is open (context.ts). */
function untraced(): undefined {
  contexts?.idle();
  return undefined;
}

/** Whether a request carries none of the headers the propagators read (no parent to follow). */
function isRoot(req: IncomingMessage): boolean {
  const headers = req.headers;
  for (const field of propagationFields) if (headers[field] !== undefined) return false;
  return true;
}

function recorded(a: Api, span: Span, method: string, path: string, parent: OtelApi.Context): RequestSpan {
  span.setAttribute('http.request.method', method);
  span.setAttribute('url.path', path);
  return { span, ids: idsOf(span), context: a.trace.setSpan(parent, span) };
}

/** Runs `fn` with the request's span active (its statements, jobs and log lines under it); `fn()` without one. */
export function inRequestSpan<T>(rs: RequestSpan | undefined, fn: () => T): T {
  return rs ? api!.context.with(rs.context, fn) : fn();
}

/** Ends a request's server span, named after what answered it (`POST /identity/v2/token/issue`) when known. */
export function endRequestSpan(rs: RequestSpan, method: string, route: string | undefined, status: number) {
  const span = rs.span;
  contexts?.release();
  if (route !== undefined) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: api!.SpanStatusCode.ERROR });
  span.end();
}

/**
 * A client span (a statement, a Redis command, an outgoing call) under the active span, or undefined
 * when tracing is off or no sampled span is active: work outside a traced operation makes no span.
 */
export function startClientSpan(name: string, attributes: OtelApi.Attributes): ClientSpan | undefined {
  const a = api;
  if (!a) return undefined;
  const context = a.context.active();
  const parent = a.trace.getSpan(context);
  if (!parent || !parent.isRecording()) return undefined;
  const t = tracing!;
  // A statement or command in a sampled request under a parent-based sampler: the child at once.
  if (t.parentBased && parent instanceof PlatformSpan && parent.traceFlags & 1) return childOf(t, parent, name, a.SpanKind.CLIENT, attributes);
  return startSpan(t, name, a.SpanKind.CLIENT, context, attributes);
}

/**
 * Ends a span of startClientSpan; a failure is recorded by its kind only (`error.type`: a SQLSTATE,
 * an error's name), never its message, which may quote a value (`invalid input syntax ...: "..."`).
 */
export function endSpan(span: ClientSpan, error?: unknown, attributes?: OtelApi.Attributes) {
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined && error !== null) {
    const code = (error as { code?: unknown }).code;
    span.setAttribute('error.type', typeof code === 'string' || typeof code === 'number' ? String(code) : ((error as Error).name ?? 'Error'));
    span.setStatus({ code: api!.SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * `fn` bound to the caller's context while tracing is on, whatever it is (none included), else `fn`: a
 * callback that another turn runs (pg-pool hands a released connection to a waiting caller from the
 * releasing statement's callback) then runs in its caller's context, not in that turn's, so a caller
 * outside any sampled span makes no span under another request's.
 */
export function bindToCaller<F extends (...args: never[]) => unknown>(fn: F): F {
  const a = api;
  if (!a) return fn;
  const context = a.context.active();
  // A callback that carries a context holds the storage on until it has run.
  let holding = context !== a.ROOT_CONTEXT;
  if (holding) contexts?.hold();
  return ((...args: Parameters<F>) => {
    if (holding) {
      holding = false;
      contexts?.release();
    }
    return a.context.with(context, fn as (...xs: Parameters<F>) => unknown, undefined, ...args);
  }) as F;
}

/** The current trace context as text, to carry in a queued job; undefined when tracing is off. */
export function injectTrace(): TraceCarrier | undefined {
  if (!api) return undefined;
  const carrier: TraceCarrier = {};
  api.propagation.inject(api.context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

export interface SpanOptions {
  kind?: 'internal' | 'producer' | 'consumer' | 'client';
  attributes?: Record<string, string | number | boolean | undefined>;
  /** The trace context the span continues (a job's carrier); otherwise the active one. */
  parent?: TraceCarrier;
  /** Other trace contexts the span relates to (the deliveries of a batch). */
  links?: (TraceCarrier | undefined)[];
}

const KINDS = { internal: 0, client: 2, producer: 3, consumer: 4 } as const;

/**
 * Runs `fn` inside a new span (its child spans, SQL and Redis included, nest under it), ending it when
 * `fn` settles and marking it failed when `fn` throws. With tracing off it is `fn()`. A span the sampler
 * does not take is still entered (a job: what it queues carries the decision on, unsampled).
 */
export function withSpan<T>(name: string, o: SpanOptions, fn: () => Promise<T>): Promise<T> {
  const a = api;
  if (!a) return fn();
  const parent = o.parent ? a.propagation.extract(a.ROOT_CONTEXT, o.parent) : a.context.active();
  const links = (o.links ?? [])
    .filter((c): c is TraceCarrier => Boolean(c?.traceparent))
    .map((c) => a.trace.getSpanContext(a.propagation.extract(a.ROOT_CONTEXT, c)))
    .filter((c): c is OtelApi.SpanContext => Boolean(c && a.isSpanContextValid(c)))
    .map((context) => ({ context }));
  const attributes = Object.fromEntries(Object.entries(o.attributes ?? {}).filter(([, v]) => v !== undefined)) as OtelApi.Attributes;
  const span = startSpan(tracing!, name, KINDS[o.kind ?? 'internal'], parent, attributes, links);
  contexts?.hold();
  return a.context.with(a.trace.setSpan(parent, span), async () => {
    try {
      return await fn();
    } catch (e) {
      if (span.isRecording()) {
        span.recordException({ name: (e as Error)?.name ?? 'Error', message: String((e as Error)?.message ?? e).slice(0, 500) });
        span.setStatus({ code: a.SpanStatusCode.ERROR });
      }
      throw e;
    } finally {
      span.end();
      contexts?.release();
    }
  });
}
