// OTLP http/protobuf for the platform's own spans (issue #31, third round): the bytes of an
// ExportTraceServiceRequest, byte for byte what the SDK's ProtobufTraceSerializer writes for the same
// spans (tested), made cheaper by what repeats from span to span: a span name's and an attribute's
// encoding (`SELECT identity`, `db.query.text` = the same statement text, `http.request.method` =
// `POST`) is made once and copied after; the resource and scope are encoded once per process. A batch
// with a span of another type, an event or a link is left to the SDK's serializer (a failed job's
// exception, a delivery's link: rare). The transport (endpoint, headers, retries, timeout,
// compression) stays the SDK's own (`createOtlpHttpExportDelegate`).
import type { PlatformSpan } from './span';

type Value = unknown;

/** A growable byte buffer with the protobuf primitives the spans need. */
class Out {
  buf: Buffer;
  pos = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  ensure(n: number) {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  varint(value: number) {
    this.ensure(10);
    const b = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        b[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      b[this.pos++] = v;
      return;
    }
    // 64-bit (two's complement for a negative), as the SDK's writer
    const abs = Math.abs(value);
    let low = abs >>> 0;
    let high = (abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      b[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    b[this.pos++] = low & 0x7f;
  }
  tag(field: number, wire: number) {
    this.varint((field << 3) | wire);
  }
  fixed32(v: number) {
    this.ensure(4);
    this.u32(v, this.pos);
    this.pos += 4;
  }
  /** Little-endian, by hand: Buffer's writeUInt32LE validates its arguments on every call. */
  private u32(v: number, at: number) {
    const b = this.buf;
    b[at] = v & 0xff;
    b[at + 1] = (v >>> 8) & 0xff;
    b[at + 2] = (v >>> 16) & 0xff;
    b[at + 3] = (v >>> 24) & 0xff;
  }
  /** An epoch time in nanoseconds given as seconds and nanoseconds (HrTime), as fixed64. */
  hrTime(seconds: number, nanos: number) {
    this.ensure(8);
    // seconds * 1e9 + nanos exceeds 2^53: split as the SDK does (exact).
    const lower16 = (seconds & 0xffff) * 1e9;
    const upper = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (lower16 >>> 0) + (((upper & 0xffff) * 0x10000) >>> 0) + nanos;
    const high = Math.floor(lower16 / 0x100000000) + ((upper / 0x10000) >>> 0) + Math.floor(low / 0x100000000);
    this.u32(low >>> 0, this.pos);
    this.u32(high >>> 0, this.pos + 4);
    this.pos += 8;
  }
  double(v: number) {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }
  bytes(b: Uint8Array) {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  raw(b: Uint8Array) {
    const n = b.length;
    this.ensure(n);
    if (n > 64) this.buf.set(b, this.pos);
    else for (let i = 0, d = this.buf, at = this.pos; i < n; i++) d[at + i] = b[i]; // short: cheaper than set's call
    this.pos += n;
  }
  string(s: string) {
    const n = Buffer.byteLength(s);
    this.varint(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }
  /** An id's hex digits as bytes (lower-case, as our ids and a valid traceparent's are; others through Buffer). */
  hex(s: string) {
    const n = s.length >>> 1;
    this.varint(n);
    this.ensure(n);
    const b = this.buf;
    let at = this.pos;
    for (let i = 0; i < s.length; i += 2) {
      const hi = HEX[s.charCodeAt(i)];
      const lo = HEX[s.charCodeAt(i + 1)];
      if (hi === undefined || lo === undefined || hi < 0 || lo < 0) {
        this.pos += this.buf.write(s, this.pos, n, 'hex');
        return;
      }
      b[at++] = (hi << 4) | lo;
    }
    this.pos = at;
  }
  /** A length-delimited field whose body `fn` writes: the body is written after room for its length, then moved if the length needs more. */
  nested(field: number, fn: () => void) {
    this.tag(field, 2);
    this.ensure(1);
    const at = this.pos++;
    fn();
    const len = this.pos - at - 1;
    if (len < 0x80) {
      this.buf[at] = len;
      return;
    }
    const size = varintSize(len);
    this.ensure(size - 1);
    this.buf.copy(this.buf, at + size, at + 1, this.pos);
    this.pos += size - 1;
    const end = this.pos;
    this.pos = at;
    this.varint(len);
    this.pos = end;
  }
  take(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.pos).slice();
  }
}

/** Character code → hex digit value, -1 for a character that is not one. */
const HEX = Int8Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1));

const varintSize = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

function anyValue(o: Out, value: Value) {
  const t = typeof value;
  if (t === 'string') {
    o.tag(1, 2);
    o.string(value as string);
  } else if (t === 'boolean') {
    o.tag(2, 0);
    o.varint(value ? 1 : 0);
  } else if (t === 'number') {
    const n = value as number;
    if (Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63) {
      o.tag(3, 0);
      o.varint(n);
    } else {
      o.tag(4, 1);
      o.double(n);
    }
  } else if (value instanceof Uint8Array) {
    o.tag(7, 2);
    o.bytes(value);
  } else if (Array.isArray(value)) {
    o.nested(5, () => {
      for (const item of value) o.nested(1, () => anyValue(o, item));
    });
  } else if (t === 'object' && value !== null) {
    o.nested(6, () => {
      for (const k of Object.keys(value as object)) o.nested(1, () => keyValue(o, k, (value as Record<string, Value>)[k]));
    });
  }
}

function keyValue(o: Out, key: string, value: Value) {
  o.tag(1, 2);
  o.string(key);
  o.nested(2, () => anyValue(o, value));
}

function attributes(o: Out, attrs: Record<string, Value> | undefined, field: number) {
  if (!attrs) return;
  for (const key of Object.keys(attrs)) o.nested(field, () => keyValue(o, key, attrs[key]));
}

/** Encoded fields that repeat (a name, a key with its string value), at most CACHE_ENTRIES of them, each of strings up to CACHE_TEXT. */
const CACHE_ENTRIES = 4096;
const CACHE_TEXT = 2048;

export interface Resource {
  attributes?: Record<string, Value>;
  schemaUrl?: string;
}
export interface Scope {
  name: string;
  version?: string;
  schemaUrl?: string;
  attributes?: Record<string, Value>;
  droppedAttributesCount?: number;
}

/**
 * The serializer for one process' spans (their one resource and scope): `serialize` answers undefined
 * for a batch it leaves to the SDK's serializer (another span type, another resource, an event, a link).
 */
export function platformProtobufSerializer(resource: Resource, scope: Scope) {
  const scratch = new Out(1 << 16);
  const names = new Map<string, Buffer>();
  const kvs = new Map<string, Map<string, Buffer>>();
  let cached = 0;
  const remember = (o: Out, start: number): Buffer => {
    cached++;
    return Buffer.from(o.buf.subarray(start, o.pos));
  };

  /** Field 9 of a span: one attribute, from the cache when its value is a (short) string. */
  const attribute = (o: Out, key: string, value: Value) => {
    if (typeof value !== 'string' || value.length > CACHE_TEXT) return o.nested(9, () => keyValue(o, key, value));
    let byValue = kvs.get(key);
    const hit = byValue?.get(value);
    if (hit) return o.raw(hit);
    const start = o.pos;
    o.nested(9, () => keyValue(o, key, value));
    if (cached < CACHE_ENTRIES) {
      if (!byValue) kvs.set(key, (byValue = new Map()));
      byValue.set(value, remember(o, start));
    }
  };

  const span = (o: Out, s: PlatformSpan) => {
    o.tag(1, 2);
    o.hex(s.traceId);
    o.tag(2, 2);
    o.hex(s.spanId);
    const traceState = s.traceState?.serialize();
    if (traceState) {
      o.tag(3, 2);
      o.string(traceState);
    }
    const parent = s.parentSpanContext;
    if (parent?.spanId) {
      o.tag(4, 2);
      o.hex(parent.spanId);
    }
    const name = names.get(s.name);
    if (name) o.raw(name);
    else {
      const start = o.pos;
      o.tag(5, 2);
      o.string(s.name);
      if (cached < CACHE_ENTRIES && s.name.length <= CACHE_TEXT) names.set(s.name, remember(o, start));
    }
    if (s.kind != null) {
      o.tag(6, 0);
      o.varint(s.kind + 1);
    }
    const start = s.startTime;
    o.tag(7, 1);
    o.hrTime(start[0], start[1]);
    const end = s.endTime;
    o.tag(8, 1);
    o.hrTime(end[0], end[1]);
    const attrs = s.attributes;
    for (const key of Object.keys(attrs)) attribute(o, key, attrs[key]);
    o.tag(10, 0);
    o.varint(s.droppedAttributesCount);
    o.tag(12, 0);
    o.varint(0);
    o.tag(14, 0);
    o.varint(0);
    o.nested(15, () => {
      if (s.statusMessage) {
        o.tag(2, 2);
        o.string(s.statusMessage);
      }
      o.tag(3, 0);
      o.varint(s.statusCode);
    });
    o.tag(16, 5);
    o.fixed32((s.traceFlags & 0xff) | 0x100 | (parent?.isRemote ? 0x200 : 0));
  };

  return {
    serialize(spans: readonly PlatformSpan[]): Uint8Array | undefined {
      for (const s of spans) {
        if (s.resource !== resource || s.instrumentationScope !== scope || s.events.length || s.links.length) return undefined;
      }
      const o = scratch;
      o.pos = 0;
      if (spans.length > 0) {
        o.nested(1, () => {
          o.nested(1, () => {
            attributes(o, resource.attributes, 1);
            o.tag(2, 0);
            o.varint(0);
          });
          o.nested(2, () => {
            o.nested(1, () => {
              o.tag(1, 2);
              o.string(scope.name);
              if (scope.version) {
                o.tag(2, 2);
                o.string(scope.version);
              }
              attributes(o, scope.attributes, 3);
              if (scope.droppedAttributesCount) {
                o.tag(4, 0);
                o.varint(scope.droppedAttributesCount);
              }
            });
            for (const s of spans) o.nested(2, () => span(o, s));
            if (scope.schemaUrl) {
              o.tag(3, 2);
              o.string(scope.schemaUrl);
            }
          });
          if (resource.schemaUrl) {
            o.tag(3, 2);
            o.string(resource.schemaUrl);
          }
        });
      }
      return o.take();
    },
  };
}
