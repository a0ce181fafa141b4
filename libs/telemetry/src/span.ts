// The platform's own span type (issue #31, third round): what the SDK's Span does for the spans the
// platform makes (a request, a statement, a Redis command, a queue hop, an outgoing GET, a plugin
// call), with plain fields: ids, start and end as performance.now() numbers, a few attributes, status,
// kind, parent. It is an @opentelemetry/api Span (contexts, propagation and log lines read it as any
// span) and, once ended, a ReadableSpan for the SDK's exporters: the shape they read (HrTime times,
// status, parent span context, resource, scope) is produced from the plain fields at export, not per
// span as it is made.
import type * as OtelApi from '@opentelemetry/api';
import { randomFillSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';

type Attributes = OtelApi.Attributes;
type AttributeValue = OtelApi.AttributeValue;
type HrTime = OtelApi.HrTime;

/** What the spans share: where an ended span goes, the resource and scope of the export, the limits. */
export interface SpanSink {
  /** Takes an ended, sampled span (the span buffer). */
  add(span: PlatformSpan): void;
}

export interface SpanShared {
  sink: SpanSink;
  resource: unknown;
  scope: { name: string; version?: string; schemaUrl?: string };
  /** OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT (or OTEL_ATTRIBUTE_COUNT_LIMIT), 128 by default. */
  attributeCountLimit: number;
  /** OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT (or OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT), none by default. */
  attributeValueLengthLimit: number;
}

const SAMPLED = 1;
const NO_EVENTS: readonly unknown[] = Object.freeze([]);
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

// Ids from a pool of random bytes: one randomFillSync per 256 spans, a hex slice per id.
const pool = Buffer.allocUnsafe(6144);
let poolAt = pool.length;
function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}
/** A new trace id (32 hex digits, never all zero). */
export const newTraceId = (): string => {
  const id = randomHex(16);
  return id === ZERO_TRACE ? randomHex(16) : id;
};
/** A new span id (16 hex digits, never all zero). */
export const newSpanId = (): string => {
  const id = randomHex(8);
  return id === ZERO_SPAN ? randomHex(8) : id;
};

// Epoch time of performance.now()'s zero, split so that [seconds, nanoseconds] keeps the microseconds.
const originSeconds = Math.floor(performance.timeOrigin / 1000);
const originMs = performance.timeOrigin - originSeconds * 1000;
/** A performance.now() reading as the exporters' HrTime: [epoch seconds, nanoseconds]. */
export function hrTimeOf(nowMs: number): HrTime {
  const ms = originMs + nowMs;
  const whole = Math.floor(ms / 1000);
  return [originSeconds + whole, Math.round((ms - whole * 1000) * 1e6)];
}

function isAttributeValue(v: unknown): v is AttributeValue {
  const t = typeof v;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  return Array.isArray(v) && v.every((x) => x === null || x === undefined || ['string', 'number', 'boolean'].includes(typeof x));
}

interface TimedEvent {
  name: string;
  attributes?: Attributes;
  time: HrTime;
  droppedAttributesCount: number;
}

/** One span of the platform's own. Made by the tracer (tracer.ts); `end()` hands it to the buffer when sampled. */
export class PlatformSpan implements OtelApi.Span {
  attributes: Attributes;
  droppedAttributesCount = 0;
  private attributeCount = 0;
  /** performance.now() at the end; -1 while the span is open. */
  endMs = -1;
  statusCode = 0;
  statusMessage: string | undefined = undefined;
  events: TimedEvent[] = NO_EVENTS as TimedEvent[];
  links: OtelApi.Link[];
  private context: OtelApi.SpanContext | undefined = undefined;

  constructor(
    readonly shared: SpanShared,
    public name: string,
    readonly kind: OtelApi.SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    readonly traceFlags: number,
    readonly traceState: OtelApi.TraceState | undefined,
    /** The parent's span context (a caller's is remote), undefined for a root. */
    readonly parentSpanContext: OtelApi.SpanContext | undefined,
    attributes: Attributes | undefined,
    links: OtelApi.Link[] | undefined,
    /** performance.now() at the start. */
    readonly startMs: number = performance.now(),
  ) {
    this.attributes = {};
    if (attributes) this.setAttributes(attributes);
    this.links = links ?? (NO_EVENTS as OtelApi.Link[]);
  }

  spanContext(): OtelApi.SpanContext {
    return (this.context ??= { traceId: this.traceId, spanId: this.spanId, traceFlags: this.traceFlags, traceState: this.traceState, isRemote: false });
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.endMs >= 0 || value === undefined || value === null || key.length === 0 || !isAttributeValue(value)) return this;
    const limits = this.shared;
    if (!Object.hasOwn(this.attributes, key)) {
      if (this.attributeCount >= limits.attributeCountLimit) {
        this.droppedAttributesCount++;
        return this;
      }
      this.attributeCount++;
    }
    const v = typeof value === 'string' && value.length > limits.attributeValueLengthLimit ? value.slice(0, limits.attributeValueLengthLimit) : value;
    // An attribute named `__proto__` is an attribute like any other, never the object's prototype.
    if (key === '__proto__') Object.defineProperty(this.attributes, key, { value: v, enumerable: true, writable: true, configurable: true });
    else this.attributes[key] = v;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | OtelApi.TimeInput, time?: OtelApi.TimeInput): this {
    if (this.endMs >= 0) return this;
    const attributes = attributesOrTime && typeof attributesOrTime === 'object' && !Array.isArray(attributesOrTime) && !(attributesOrTime instanceof Date) ? (attributesOrTime as Attributes) : undefined;
    const at = attributes ? time : (attributesOrTime as OtelApi.TimeInput | undefined);
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push({ name, attributes, time: at === undefined ? hrTimeOf(performance.now()) : timeInput(at), droppedAttributesCount: 0 });
    return this;
  }

  addLink(link: OtelApi.Link): this {
    if (this.endMs >= 0) return this;
    if (this.links === NO_EVENTS) this.links = [];
    this.links.push(link);
    return this;
  }

  addLinks(links: OtelApi.Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: OtelApi.SpanStatus): this {
    if (this.endMs >= 0 || this.statusCode === 1) return this; // OK is final, as the SDK has it
    this.statusCode = status.code;
    this.statusMessage = status.code === 2 ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (this.endMs < 0) this.name = name;
    return this;
  }

  end(): void {
    if (this.endMs >= 0) return;
    this.endMs = performance.now();
    if (this.traceFlags & SAMPLED) this.shared.sink.add(this);
  }

  isRecording(): boolean {
    return this.endMs < 0;
  }

  recordException(exception: OtelApi.Exception): void {
    const e = typeof exception === 'string' ? { message: exception } : (exception as { name?: string; message?: string; code?: string | number; stack?: string });
    const attributes: Attributes = {};
    if (e.code !== undefined || e.name) attributes['exception.type'] = e.code !== undefined ? String(e.code) : e.name;
    if (e.message) attributes['exception.message'] = e.message;
    if (e.stack) attributes['exception.stacktrace'] = e.stack;
    this.addEvent('exception', attributes);
  }

  // The ReadableSpan shape the exporters read, made at export.
  get startTime(): HrTime {
    return hrTimeOf(this.startMs);
  }
  get endTime(): HrTime {
    return hrTimeOf(this.endMs < 0 ? this.startMs : this.endMs);
  }
  get duration(): HrTime {
    const ms = this.endMs < 0 ? 0 : this.endMs - this.startMs;
    const s = Math.floor(ms / 1000);
    return [s, Math.round((ms - s * 1000) * 1e6)];
  }
  get ended(): boolean {
    return this.endMs >= 0;
  }
  get status(): OtelApi.SpanStatus {
    return this.statusMessage === undefined ? { code: this.statusCode } : { code: this.statusCode, message: this.statusMessage };
  }
  get resource(): unknown {
    return this.shared.resource;
  }
  get instrumentationScope() {
    return this.shared.scope;
  }
  get droppedEventsCount(): number {
    return 0;
  }
  get droppedLinksCount(): number {
    return 0;
  }
}

function timeInput(t: OtelApi.TimeInput): HrTime {
  if (Array.isArray(t)) return t as HrTime;
  const ms = t instanceof Date ? t.getTime() : (t as number);
  // A number below the process' start is performance.now() time, as the SDK reads it; else epoch ms.
  return ms < performance.timeOrigin ? hrTimeOf(ms) : hrTimeOf(ms - performance.timeOrigin);
}
