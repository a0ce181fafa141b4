import { Reader, Enum, Type, type Field } from 'protobufjs';
import type { JsonObject, JsonValue } from './json';

/**
 * Messages to and from bytes, driven by the protocol's descriptor (protobufjs parses it; this codec
 * reads the wire with protobufjs' Reader and writes it itself). Own code rather than
 * protobufjs' generated decoders because a plugin's answer is untrusted input:
 * - google.protobuf.Struct / ListValue / Value are plain JSON both ways (null, nested lists, numbers);
 *   a Struct key is always an own data property, `__proto__` included (protobufjs assigns map keys,
 *   which turns `__proto__` into a prototype change), the way JSON.parse makes it;
 * - nesting deeper than `maxDepth` is refused before recursing (no stack overflow, whatever the bytes);
 * - a known field with the wrong wire type, a truncated message or an invalid length is an error naming
 *   the field; fields this protocol version does not know are skipped (as protobuf does).
 * Decoded messages carry every field (proto3's defaults; a Struct {}, a list []), enums by name (the
 * number when unknown), a message field only when sent. A Struct number that is not finite (NaN,
 * Infinity: JSON has none) decodes as null, as JSON.stringify writes it.
 */

export interface CodecLimits {
  /** Struct / ListValue nesting (the message's own level is 1). */
  maxDepth: number;
}

const join = (key: string | number, rest: string) => {
  const head = typeof key === 'number' ? `[${key}]` : key;
  return !rest ? head : rest.startsWith('[') ? `${head}${rest}` : `${head}.${rest}`;
};

/** The bytes are not a message of the expected type (a plugin's garbage, a truncated frame). */
export class DecodeError extends Error {
  constructor(
    public path: string,
    readonly reason: string,
  ) {
    super(`${path || 'message'}: ${reason}`);
    this.name = 'DecodeError';
  }

  /** The same error one level up (paths are built only when something fails: decoding stays cheap). */
  under(key: string | number): this {
    this.path = join(key, this.path);
    this.message = `${this.path}: ${this.reason}`;
    return this;
  }
}

/** A value cannot be sent in the field (not JSON, too deep, the wrong type). */
export class EncodeError extends Error {
  constructor(
    public path: string,
    readonly reason: string,
  ) {
    super(`${path || 'message'}: ${reason}`);
    this.name = 'EncodeError';
  }

  under(key: string | number): this {
    this.path = join(key, this.path);
    this.message = `${this.path}: ${this.reason}`;
    return this;
  }
}

/** `e` with `key` put in front of its path, when it is one of ours. */
function under<E>(e: E, key: string | number): E {
  return e instanceof DecodeError || e instanceof EncodeError ? (e.under(key) as E) : e;
}

const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;
// Tags of google.protobuf.Struct (fields = 1, a map entry of key = 1 and value = 2), ListValue
// (values = 1) and Value (null_value = 1, number_value = 2, string_value = 3, bool_value = 4,
// struct_value = 5, list_value = 6).
const ENTRY = (1 << 3) | WIRE.bytes;
const ENTRY_KEY = (1 << 3) | WIRE.bytes;
const ENTRY_VALUE = (2 << 3) | WIRE.bytes;
const LIST_VALUES = (1 << 3) | WIRE.bytes;
const V_NULL = (1 << 3) | WIRE.varint;
const V_NUMBER = (2 << 3) | WIRE.fixed64;
const V_STRING = (3 << 3) | WIRE.bytes;
const V_BOOL = (4 << 3) | WIRE.varint;
const V_STRUCT = (5 << 3) | WIRE.bytes;
const V_LIST = (6 << 3) | WIRE.bytes;
const STRUCT = '.google.protobuf.Struct';
const LIST = '.google.protobuf.ListValue';
const VALUE = '.google.protobuf.Value';
const EMPTY = '.google.protobuf.Empty';

type Kind = 'string' | 'double' | 'float' | 'int32' | 'uint32' | 'bool' | 'enum' | 'struct' | 'list' | 'value' | 'message';

interface FieldPlan {
  name: string;
  id: number;
  kind: Kind;
  wire: number;
  repeated: boolean;
  enumType?: Enum;
  message?: MessagePlan;
}

interface MessagePlan {
  name: string;
  fields: FieldPlan[];
  /** Fields by number (the protocol's numbers are small). */
  byId: (FieldPlan | undefined)[];
}

const SCALARS: Partial<Record<string, { kind: Kind; wire: number }>> = {
  string: { kind: 'string', wire: WIRE.bytes },
  double: { kind: 'double', wire: WIRE.fixed64 },
  float: { kind: 'float', wire: WIRE.fixed32 },
  int32: { kind: 'int32', wire: WIRE.varint },
  uint32: { kind: 'uint32', wire: WIRE.varint },
  bool: { kind: 'bool', wire: WIRE.varint },
};

const plans = new WeakMap<Type, MessagePlan>();

/** The field list of a message type, resolved once (types the protocol does not use are refused). */
function planOf(type: Type): MessagePlan {
  const known = plans.get(type);
  if (known) return known;
  const plan: MessagePlan = { name: type.fullName.slice(1), fields: [], byId: [] };
  plans.set(type, plan); // before the fields: a message may refer to itself
  for (const f of type.fieldsArray as Field[]) {
    f.resolve();
    let p: FieldPlan;
    const rt = f.resolvedType;
    if (f.map) throw new Error(`${f.fullName}: map fields are not used by the protocol`);
    if (rt instanceof Enum) p = { name: f.name, id: f.id, kind: 'enum', wire: WIRE.varint, repeated: f.repeated, enumType: rt };
    else if (rt instanceof Type) {
      const kind: Kind = rt.fullName === STRUCT ? 'struct' : rt.fullName === LIST ? 'list' : rt.fullName === VALUE ? 'value' : 'message';
      p = { name: f.name, id: f.id, kind, wire: WIRE.bytes, repeated: f.repeated, ...(kind === 'message' && { message: planOf(rt) }) };
    } else {
      const s = SCALARS[f.type];
      if (!s) throw new Error(`${f.fullName}: type ${f.type} is not used by the protocol`);
      if (f.repeated && s.kind !== 'string') throw new Error(`${f.fullName}: repeated ${f.type} is not used by the protocol`);
      p = { name: f.name, id: f.id, kind: s.kind, wire: s.wire, repeated: f.repeated };
    }
    plan.fields.push(p);
    if (p.id > 1024) throw new Error(`${f.fullName}: field numbers above 1024 are not used by the protocol`);
    plan.byId[p.id] = p;
  }
  return plan;
}

// ---------------------------------------------------------------- decoding

class Decoder {
  constructor(private readonly maxDepth: number) {}

  private tooDeep(depth: number): void {
    if (depth > this.maxDepth) throw new DecodeError('', `nested deeper than ${this.maxDepth} levels`);
  }

  message(r: Reader, end: number, plan: MessagePlan, depth: number): Record<string, unknown> {
    this.tooDeep(depth);
    const out: Record<string, unknown> = {};
    for (const f of plan.fields) if (f.repeated) out[f.name] = [];
    while (r.pos < end) {
      const tag = r.uint32();
      const id = tag >>> 3;
      const wire = tag & 7;
      const f = plan.byId[id];
      if (!f) {
        if (id === 0) throw new DecodeError('', 'invalid field number 0');
        r.skipType(wire);
        continue;
      }
      if (wire !== f.wire) throw new DecodeError(f.name, `wire type ${wire}, expected ${f.wire}`);
      let v: unknown;
      try {
        v = this.field(r, f, depth);
      } catch (e) {
        throw under(e, f.repeated ? `${f.name}[${(out[f.name] as unknown[]).length}]` : f.name);
      }
      if (f.repeated) (out[f.name] as unknown[]).push(v);
      else out[f.name] = v;
    }
    if (r.pos !== end) throw new DecodeError('', 'a field runs past the end of its message');
    for (const f of plan.fields) {
      if (!f.repeated && !Object.hasOwn(out, f.name)) {
        const d = defaultOf(f);
        if (d !== undefined) out[f.name] = d;
      }
    }
    return out;
  }

  private field(r: Reader, f: FieldPlan, depth: number): unknown {
    switch (f.kind) {
      case 'string':
        return r.string();
      case 'double':
        return r.double();
      case 'float':
        return r.float();
      case 'int32':
        return r.int32();
      case 'uint32':
        return r.uint32();
      case 'bool':
        return r.bool();
      case 'enum': {
        const n = r.int32();
        return f.enumType!.valuesById[n] ?? n;
      }
      default: {
        const end = this.end(r);
        if (f.kind === 'struct') return this.struct(r, end, depth + 1);
        if (f.kind === 'list') return this.list(r, end, depth + 1);
        if (f.kind === 'value') return this.value(r, end, depth + 1);
        return this.message(r, end, f.message!, depth + 1);
      }
    }
  }

  /** The end of a length-delimited value starting at the reader's position. */
  private end(r: Reader): number {
    const len = r.uint32();
    const end = r.pos + len;
    if (end > r.len) throw new DecodeError('', 'a length runs past the end of the message');
    return end;
  }

  struct(r: Reader, end: number, depth: number): JsonObject {
    this.tooDeep(depth);
    const out: JsonObject = {};
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag !== ENTRY) {
        this.skip(r, tag);
        continue;
      }
      const entryEnd = this.end(r);
      let key = '';
      let value: JsonValue = null;
      while (r.pos < entryEnd) {
        const t = r.uint32();
        if (t === ENTRY_KEY) key = r.string();
        else if (t === ENTRY_VALUE) {
          try {
            value = this.value(r, this.end(r), depth + 1);
          } catch (e) {
            throw under(e, key);
          }
        } else this.skip(r, t);
      }
      if (r.pos !== entryEnd) throw new DecodeError(key, 'a Struct entry runs past its end');
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }

  list(r: Reader, end: number, depth: number): JsonValue[] {
    this.tooDeep(depth);
    const out: JsonValue[] = [];
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag !== LIST_VALUES) {
        this.skip(r, tag);
        continue;
      }
      try {
        out.push(this.value(r, this.end(r), depth + 1));
      } catch (e) {
        throw under(e, out.length);
      }
    }
    return out;
  }

  value(r: Reader, end: number, depth: number): JsonValue {
    this.tooDeep(depth);
    let v: JsonValue = null; // a Value with no kind set is null
    while (r.pos < end) {
      const tag = r.uint32();
      switch (tag) {
        case V_NULL:
          r.int32();
          v = null;
          break;
        case V_NUMBER: {
          const n = r.double();
          v = Number.isFinite(n) ? n : null;
          break;
        }
        case V_STRING:
          v = r.string();
          break;
        case V_BOOL:
          v = r.bool();
          break;
        case V_STRUCT:
          v = this.struct(r, this.end(r), depth + 1);
          break;
        case V_LIST:
          v = this.list(r, this.end(r), depth + 1);
          break;
        default:
          this.skip(r, tag);
      }
    }
    if (r.pos !== end) throw new DecodeError('', 'a Value runs past its end');
    return v;
  }

  private skip(r: Reader, tag: number): void {
    if (tag >>> 3 === 0) throw new DecodeError('', 'invalid field number 0');
    r.skipType(tag & 7);
  }
}

function defaultOf(f: FieldPlan): unknown {
  switch (f.kind) {
    case 'string':
      return '';
    case 'double':
    case 'float':
    case 'int32':
    case 'uint32':
      return 0;
    case 'bool':
      return false;
    case 'enum':
      return f.enumType!.valuesById[0] ?? 0;
    case 'struct':
      return {};
    case 'list':
      return [];
    case 'value':
      return null;
    default:
      return undefined; // a message field not sent stays absent
  }
}

// ---------------------------------------------------------------- encoding

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);
/** An int32 as protobuf writes it: a negative one sign-extended to 10 bytes. */
const int32Size = (n: number): number => (n < 0 ? 10 : varintSize(n));
const typeError = (v: unknown) => new EncodeError('', `${typeof v === 'object' ? 'an object of a class' : `a ${typeof v}`} is not JSON`);

/**
 * Writes a message in two passes over the value: the first checks every value and measures every
 * length-delimited part (kept in order in `sizes`), the second writes into one buffer of the exact
 * size. (protobufjs' Writer queues an operation per value and copies at the end: about twice as slow
 * on a page of cost rows.)
 */
class Encoder {
  /** The lengths measured by pass 1, in writing order (kept between calls up to 64 Ki entries). */
  private sizes = new Uint32Array(1024);
  private count = 0;
  private cursor = 0;
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;

  constructor(private readonly maxDepth: number) {}

  encode(plan: MessagePlan, value: unknown): Buffer {
    this.count = 0;
    const size = this.sizeMessage(plan, value, 1);
    this.buf = Buffer.allocUnsafe(size);
    this.pos = 0;
    this.cursor = 0;
    this.writeMessage(plan, value as Record<string, unknown>);
    const out = this.buf;
    this.buf = Buffer.alloc(0);
    if (this.sizes.length > 65_536) this.sizes = new Uint32Array(1024);
    return out;
  }

  private tooDeep(depth: number): void {
    if (depth > this.maxDepth) throw new EncodeError('', `nested deeper than ${this.maxDepth} levels`);
  }

  /** Appends a length (0 for one measured later, set by its index) and answers its index. */
  private push(n: number): number {
    if (this.count === this.sizes.length) {
      const grown = new Uint32Array(this.sizes.length * 2);
      grown.set(this.sizes);
      this.sizes = grown;
    }
    this.sizes[this.count] = n;
    return this.count++;
  }

  private hole(): number {
    return this.push(0);
  }

  // ---- pass 1: check and measure

  private sizeMessage(plan: MessagePlan, value: unknown, depth: number): number {
    this.tooDeep(depth);
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !isPlainObject(value)) throw new EncodeError('', 'must be an object');
    const obj = value as Record<string, unknown>;
    let total = 0;
    for (const f of plan.fields) {
      const v = obj[f.name];
      if (v === undefined || v === null || !Object.prototype.hasOwnProperty.call(obj, f.name)) continue;
      if (!f.repeated) {
        try {
          total += this.sizeField(f, v, depth);
        } catch (e) {
          throw under(e, f.name);
        }
        continue;
      }
      if (!Array.isArray(v)) throw new EncodeError(f.name, 'must be a list');
      for (let i = 0; i < v.length; i++) {
        try {
          total += this.sizeField(f, v[i], depth);
        } catch (e) {
          throw under(under(e, i), f.name);
        }
      }
    }
    return total;
  }

  private sizeField(f: FieldPlan, v: unknown, depth: number): number {
    const tag = varintSize((f.id << 3) | f.wire);
    switch (f.kind) {
      case 'string': {
        if (typeof v !== 'string') throw new EncodeError('', 'must be a string');
        if (v === '' && !f.repeated) return 0;
        const len = Buffer.byteLength(v);
        this.push(len);
        return tag + varintSize(len) + len;
      }
      case 'double':
      case 'float':
        if (typeof v !== 'number') throw new EncodeError('', 'must be a number');
        return v === 0 ? 0 : tag + (f.kind === 'double' ? 8 : 4);
      case 'int32':
      case 'uint32':
        if (typeof v !== 'number' || !Number.isInteger(v)) throw new EncodeError('', 'must be an integer');
        if (f.kind === 'int32' && (v < -(2 ** 31) || v >= 2 ** 31)) throw new EncodeError('', 'must be a 32-bit integer');
        if (f.kind === 'uint32' && (v < 0 || v >= 2 ** 32)) throw new EncodeError('', 'must be an unsigned 32-bit integer');
        return v === 0 ? 0 : tag + (f.kind === 'int32' ? int32Size(v) : varintSize(v));
      case 'bool':
        if (typeof v !== 'boolean') throw new EncodeError('', 'must be a boolean');
        return v ? tag + 1 : 0;
      case 'enum': {
        const n = typeof v === 'string' && Object.prototype.hasOwnProperty.call(f.enumType!.values, v) ? f.enumType!.values[v] : undefined;
        if (n === undefined) throw new EncodeError('', `must be one of ${Object.keys(f.enumType!.values).join(', ')}`);
        return n === 0 ? 0 : tag + int32Size(n);
      }
      default: {
        const at = this.hole();
        let inner: number;
        if (f.kind === 'struct') inner = this.sizeStruct(v, depth + 1);
        else if (f.kind === 'list') {
          if (!Array.isArray(v)) throw new EncodeError('', 'must be a list');
          inner = this.sizeList(v, depth + 1);
        } else if (f.kind === 'value') inner = this.sizeValue(v, depth + 1);
        else inner = this.sizeMessage(f.message!, v, depth + 1);
        this.sizes[at] = inner;
        return tag + varintSize(inner) + inner;
      }
    }
  }

  private sizeStruct(v: unknown, depth: number): number {
    this.tooDeep(depth);
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !isPlainObject(v)) throw new EncodeError('', 'must be a JSON object');
    const obj = v as Record<string, unknown>;
    let total = 0;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      if (item === undefined) continue; // as JSON.stringify leaves it out
      const entryAt = this.hole();
      const keyLen = Buffer.byteLength(key);
      this.push(keyLen);
      const valueAt = this.hole();
      let value: number;
      try {
        value = this.sizeValue(item, depth + 1);
      } catch (e) {
        throw under(e, key);
      }
      this.sizes[valueAt] = value;
      const entry = 1 + varintSize(keyLen) + keyLen + 1 + varintSize(value) + value;
      this.sizes[entryAt] = entry;
      total += 1 + varintSize(entry) + entry;
    }
    return total;
  }

  private sizeList(v: unknown[], depth: number): number {
    this.tooDeep(depth);
    let total = 0;
    for (let i = 0; i < v.length; i++) {
      const at = this.hole();
      let s: number;
      try {
        s = this.sizeValue(v[i] === undefined ? null : v[i], depth + 1);
      } catch (e) {
        throw under(e, i);
      }
      this.sizes[at] = s;
      total += 1 + varintSize(s) + s;
    }
    return total;
  }

  private sizeValue(v: unknown, depth: number): number {
    this.tooDeep(depth);
    if (typeof v === 'string') {
      const len = Buffer.byteLength(v);
      this.push(len);
      return 1 + varintSize(len) + len;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new EncodeError('', 'must be a finite number');
      return 9;
    }
    if (v === null || typeof v === 'boolean') return 2;
    if (typeof v !== 'object' || (!Array.isArray(v) && !isPlainObject(v))) throw typeError(v);
    const at = this.hole();
    const inner = Array.isArray(v) ? this.sizeList(v, depth) : this.sizeStruct(v, depth);
    this.sizes[at] = inner;
    return 1 + varintSize(inner) + inner;
  }

  // ---- pass 2: write (every value was checked by pass 1)

  private varint(n: number): void {
    const b = this.buf;
    let p = this.pos;
    while (n > 0x7f) {
      b[p++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    b[p++] = n;
    this.pos = p;
  }

  private int32(n: number): void {
    if (n >= 0) return this.varint(n);
    // sign-extended to 64 bits: the low 32 bits, then the high 32 bits all ones
    let lo = n >>> 0;
    for (let i = 0; i < 4; i++) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    this.buf[this.pos++] = (lo & 0x0f) | 0x70 | 0x80; // 4 low bits + 3 of the high word
    for (let i = 0; i < 4; i++) this.buf[this.pos++] = 0xff;
    this.buf[this.pos++] = 0x01;
  }

  private string(v: string): void {
    const len = this.sizes[this.cursor++];
    this.varint(len);
    if (len > 0) this.buf.write(v, this.pos, len, 'utf8');
    this.pos += len;
  }

  private writeMessage(plan: MessagePlan, obj: Record<string, unknown>): void {
    for (const f of plan.fields) {
      const v = obj[f.name];
      if (v === undefined || v === null || !Object.prototype.hasOwnProperty.call(obj, f.name)) continue;
      if (f.repeated) for (const item of v as unknown[]) this.writeField(f, item);
      else this.writeField(f, v);
    }
  }

  private writeField(f: FieldPlan, v: unknown): void {
    const tag = (f.id << 3) | f.wire;
    switch (f.kind) {
      case 'string':
        if (v === '' && !f.repeated) return;
        this.varint(tag);
        this.string(v as string);
        return;
      case 'double':
        if (v === 0) return;
        this.varint(tag);
        this.pos = this.buf.writeDoubleLE(v as number, this.pos);
        return;
      case 'float':
        if (v === 0) return;
        this.varint(tag);
        this.pos = this.buf.writeFloatLE(v as number, this.pos);
        return;
      case 'int32':
      case 'uint32':
        if (v === 0) return;
        this.varint(tag);
        if (f.kind === 'int32') this.int32(v as number);
        else this.varint(v as number);
        return;
      case 'bool':
        if (!v) return;
        this.varint(tag);
        this.buf[this.pos++] = 1;
        return;
      case 'enum': {
        const n = f.enumType!.values[v as string];
        if (n === 0) return;
        this.varint(tag);
        this.int32(n);
        return;
      }
      default:
        this.varint(tag);
        this.varint(this.sizes[this.cursor++]);
        if (f.kind === 'struct') this.writeStruct(v as Record<string, unknown>);
        else if (f.kind === 'list') this.writeList(v as unknown[]);
        else if (f.kind === 'value') this.writeValue(v);
        else this.writeMessage(f.message!, v as Record<string, unknown>);
    }
  }

  private writeStruct(obj: Record<string, unknown>): void {
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      if (item === undefined) continue;
      this.buf[this.pos++] = ENTRY;
      this.varint(this.sizes[this.cursor++]);
      this.buf[this.pos++] = ENTRY_KEY;
      this.string(key);
      this.buf[this.pos++] = ENTRY_VALUE;
      this.varint(this.sizes[this.cursor++]);
      this.writeValue(item);
    }
  }

  private writeList(v: unknown[]): void {
    for (let i = 0; i < v.length; i++) {
      this.buf[this.pos++] = LIST_VALUES;
      this.varint(this.sizes[this.cursor++]);
      this.writeValue(v[i] === undefined ? null : v[i]);
    }
  }

  private writeValue(v: unknown): void {
    if (typeof v === 'string') {
      this.buf[this.pos++] = V_STRING;
      this.string(v);
    } else if (typeof v === 'number') {
      this.buf[this.pos++] = V_NUMBER;
      this.pos = this.buf.writeDoubleLE(v, this.pos);
    } else if (v === null) {
      this.buf[this.pos++] = V_NULL;
      this.buf[this.pos++] = 0;
    } else if (typeof v === 'boolean') {
      this.buf[this.pos++] = V_BOOL;
      this.buf[this.pos++] = v ? 1 : 0;
    } else {
      this.buf[this.pos++] = Array.isArray(v) ? V_LIST : V_STRUCT;
      this.varint(this.sizes[this.cursor++]);
      if (Array.isArray(v)) this.writeList(v);
      else this.writeStruct(v as Record<string, unknown>);
    }
  }
}

/** Encodes and decodes one message type. */
export class MessageCodec<Decoded, Input> {
  private readonly plan: MessagePlan;
  private readonly decoder: Decoder;
  private readonly encoder: Encoder;
  readonly isEmpty: boolean;

  constructor(type: Type, limits: CodecLimits) {
    this.plan = planOf(type);
    this.decoder = new Decoder(limits.maxDepth);
    this.encoder = new Encoder(limits.maxDepth);
    this.isEmpty = type.fullName === EMPTY;
  }

  get typeName(): string {
    return this.plan.name;
  }

  /** The message's bytes; an EncodeError names the field that cannot be sent. */
  encode(value: Input): Buffer {
    return this.encoder.encode(this.plan, value ?? {});
  }

  /** The message of these bytes; a DecodeError says what is wrong with them. */
  decode(bytes: Uint8Array): Decoded {
    const r = Reader.create(bytes);
    try {
      return this.decoder.message(r, r.len, this.plan, 1) as Decoded;
    } catch (e) {
      if (e instanceof DecodeError) throw e;
      // protobufjs' Reader: "index out of range", "invalid wire type", "maximum nesting depth exceeded"
      throw new DecodeError('', (e as Error)?.message ?? String(e));
    }
  }
}
