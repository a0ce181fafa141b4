// Where the platform's own spans are made and sent (issue #31, third round). The SDK (NodeSDK) is
// still started for the context manager (ours, context.ts: an AsyncLocalStorage), the propagators of OTEL_PROPAGATORS and
// the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, its detectors); the spans are PlatformSpan
// (span.ts), decided by the standard sampler of OTEL_TRACES_SAMPLER, queued in a SpanBuffer per
// exporter of OTEL_TRACES_EXPORTER (buffer.ts, OTEL_BSP_*) and exported by the SDK's own exporters.
import type * as OtelApi from '@opentelemetry/api';
import type * as SdkNode from '@opentelemetry/sdk-node';
import { SpanBuffer, bufferOptionsFromEnv, type BatchExporter } from './buffer';
import { platformProtobufSerializer, type Resource } from './otlp-proto';
import { PlatformSpan, newSpanId, newTraceId, type SpanShared } from './span';

type Api = typeof OtelApi;
type Sampler = SdkNode.tracing.Sampler;

/** The scope every span of the platform is exported under. */
export const SCOPE = { name: '@platform/telemetry' };

/** One process' tracing: the API, the sampler, what spans share (resource, buffer, limits). */
export interface Tracing {
  api: Api;
  sampler: Sampler;
  /** The sampler is a parentbased_* one: a sampled local parent's child is sampled without asking it. */
  parentBased: boolean;
  shared: SpanShared;
  buffers: SpanBuffer<PlatformSpan>[];
}

const SAMPLED = 1;

/**
 * The standard sampler of `OTEL_TRACES_SAMPLER` (+ `_ARG`), as the SDK builds it: one of the six
 * standard ones, the SDK's default (`parentbased_always_on`) for anything else. `ratio` is rootSampling's.
 */
export function standardSampler(tracing: typeof SdkNode.tracing, name: string | undefined, ratio: number): { sampler: Sampler; parentBased: boolean } {
  const { AlwaysOnSampler, AlwaysOffSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = tracing;
  if (name === undefined) return { sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), parentBased: true };
  const root = name.endsWith('always_on') ? new AlwaysOnSampler() : name.endsWith('always_off') ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  const parentBased = name.startsWith('parentbased_');
  return { sampler: parentBased ? new ParentBasedSampler({ root }) : root, parentBased };
}

/**
 * The SDK's http/protobuf trace exporter with our serializer (otlp-proto.ts: the same bytes, cheaper for
 * our spans): the transport, its variables (endpoint, headers, timeout, compression) and retries are the
 * SDK's own, built as its OTLPTraceExporter builds them.
 */
function protobufExporter(resource: unknown): BatchExporter<PlatformSpan> {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = require('@opentelemetry/otlp-exporter-base/node-http') as typeof import('@opentelemetry/otlp-exporter-base/node-http');
  const { ProtobufTraceSerializer, TraceExporterMetricsHelper } = require('@opentelemetry/otlp-transformer') as typeof import('@opentelemetry/otlp-transformer');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const ours = platformProtobufSerializer(resource as Resource, SCOPE);
  const serializer = {
    serializeRequest: (spans: readonly unknown[]) => ours.serialize(spans as PlatformSpan[]) ?? ProtobufTraceSerializer.serializeRequest(spans as never),
    deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
  };
  return createOtlpHttpExportDelegate<any, unknown>(convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }), serializer, 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined) as unknown as BatchExporter<PlatformSpan>;
}

/** The exporters of `OTEL_TRACES_EXPORTER` as the SDK chooses them (otlp by default; its protocol; zipkin; console). */
export function exportersFromEnv(tracing: typeof SdkNode.tracing, env: NodeJS.ProcessEnv, warn: (m: string) => void, resource: unknown): BatchExporter<PlatformSpan>[] {
  let names = [...new Set((env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim()).filter((e) => e && e !== 'null'))];
  if (names[0] === 'none') return [];
  if (names.length === 0 || names.includes('none')) names = ['otlp'];
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const made = names.map((name): BatchExporter<PlatformSpan> | undefined => {
    if (name === 'otlp') {
      const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? '').trim() || (env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim() || 'http/protobuf';
      if (protocol === 'grpc') return new (require('@opentelemetry/exporter-trace-otlp-grpc').OTLPTraceExporter)();
      if (protocol === 'http/json') return new (require('@opentelemetry/exporter-trace-otlp-http').OTLPTraceExporter)();
      if (protocol !== 'http/protobuf') warn(`Unsupported OTLP traces protocol: ${protocol}. Using http/protobuf.`);
      return protobufExporter(resource);
    }
    if (name === 'zipkin') return new (require('@opentelemetry/exporter-zipkin').ZipkinExporter)();
    if (name === 'console') return new tracing.ConsoleSpanExporter() as unknown as BatchExporter<PlatformSpan>;
    warn(`Unrecognized OTEL_TRACES_EXPORTER value: ${name}.`);
    return undefined;
  });
  /* eslint-enable @typescript-eslint/no-require-imports */
  return made.filter((e): e is BatchExporter<PlatformSpan> => e !== undefined);
}

const limit = (env: NodeJS.ProcessEnv, names: string[], fallback: number) => {
  for (const name of names) {
    const raw = (env[name] ?? '').trim();
    const n = raw === '' ? NaN : Number(raw);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  return fallback;
};

/** What the spans share, the buffers built from the exporters and OTEL_BSP_*, for a resource. */
export function makeShared(api: Api, resource: unknown, exporters: BatchExporter<PlatformSpan>[], env: NodeJS.ProcessEnv): { shared: SpanShared; buffers: SpanBuffer<PlatformSpan>[] } {
  const res = resource as { asyncAttributesPending?: boolean; waitForAsyncAttributes?: () => Promise<void> } | undefined;
  const hooks = {
    outside: <T>(fn: () => T) => api.context.with(api.ROOT_CONTEXT, fn),
    ready: () => (res?.asyncAttributesPending && res.waitForAsyncAttributes ? res.waitForAsyncAttributes() : undefined),
    warn: (m: string) => api.diag.warn(m),
  };
  const options = bufferOptionsFromEnv(env);
  const buffers = exporters.map((e) => new SpanBuffer(e, options, hooks));
  const sink = buffers.length === 1 ? buffers[0] : { add: (s: PlatformSpan) => buffers.forEach((b) => b.add(s)) };
  return {
    buffers,
    shared: {
      sink,
      resource,
      scope: SCOPE,
      attributeCountLimit: limit(env, ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'], 128),
      attributeValueLengthLimit: limit(env, ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'], Infinity),
    },
  };
}

/** A sampled root (a request the draw took): no sampler call, a new trace. */
export function rootSpan(t: Tracing, name: string, kind: OtelApi.SpanKind, attributes?: OtelApi.Attributes): PlatformSpan {
  return new PlatformSpan(t.shared, name, kind, newTraceId(), newSpanId(), SAMPLED, undefined, undefined, attributes, undefined);
}

/**
 * A span under `parentContext` (a caller's extracted context, the active one, ROOT_CONTEXT), as the
 * SDK's tracer makes it: the parent's trace (a new one without a valid parent), the sampler's decision;
 * a span the sampler drops is an unrecorded span carrying that decision (the API's NonRecordingSpan).
 */
export function startSpan(
  t: Tracing,
  name: string,
  kind: OtelApi.SpanKind,
  parentContext: OtelApi.Context,
  attributes?: OtelApi.Attributes,
  links?: OtelApi.Link[],
): OtelApi.Span {
  const a = t.api;
  const active = a.trace.getSpan(parentContext);
  // The hot case: a sampled span of ours active under a parent-based sampler (a statement in a request).
  if (t.parentBased && active instanceof PlatformSpan && active.traceFlags & SAMPLED) return childOf(t, active, name, kind, attributes, links);
  const parent = active?.spanContext();
  const valid = parent !== undefined && a.isSpanContextValid(parent);
  const traceId = valid ? parent.traceId : newTraceId();
  const spanId = newSpanId();
  const result = t.sampler.shouldSample(parentContext, traceId, name, kind, attributes ?? {}, links ?? []);
  const traceState = result.traceState ?? (valid ? parent.traceState : undefined);
  if (result.decision === 0) return a.trace.wrapSpanContext({ traceId, spanId, traceFlags: 0, traceState });
  const flags = result.decision === 2 ? SAMPLED : 0;
  const attrs = result.attributes ? { ...attributes, ...result.attributes } : attributes;
  return new PlatformSpan(t.shared, name, kind, traceId, spanId, flags, traceState, valid ? parent : undefined, attrs, links);
}

/** A sampled child of a span of ours (the parent-based sampler's answer for a sampled local parent). */
export function childOf(t: Tracing, parent: PlatformSpan, name: string, kind: OtelApi.SpanKind, attributes?: OtelApi.Attributes, links?: OtelApi.Link[]): PlatformSpan {
  return new PlatformSpan(t.shared, name, kind, parent.traceId, newSpanId(), SAMPLED, parent.traceState, parent.spanContext(), attributes, links);
}
