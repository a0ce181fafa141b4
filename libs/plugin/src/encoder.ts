import { EncodeError, ENTRY, ENTRY_KEY, ENTRY_VALUE, isPlainObject, LIST_VALUES, under, V_BOOL, V_LIST, V_NULL, V_NUMBER, V_STRING, V_STRUCT, type FieldPlan, type MessagePlan } from './wire';

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);
/** An int32 as protobuf writes it: a negative one sign-extended to 10 bytes. */
const int32Size = (n: number): number => (n < 0 ? 10 : varintSize(n));
/** Strings up to this length are measured and written in JS when they are ASCII (no native call each). */
const SHORT = 32;
/** A string's UTF-8 length: a short ASCII one (most keys and labels) counted here, others by Buffer.byteLength. */
function utf8Length(s: string): number {
  const n = s.length;
  if (n > SHORT) return Buffer.byteLength(s);
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s);
  return n;
}
const typeError = (v: unknown) => new EncodeError('', `${typeof v === 'object' ? 'an object of a class' : `a ${typeof v}`} is not JSON`);
/**
 * Writes a message in two passes over the value: the first checks every value and measures every
 * length-delimited part (kept in order in `sizes`), the second writes into one buffer of the exact
 * size. (protobufjs' Writer queues an operation per value and copies at the end: about twice as slow
 * on a page of cost rows.)
 */
export class Encoder {
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
        const len = utf8Length(v);
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
      const keyLen = utf8Length(key);
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
      const len = utf8Length(v);
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
    if (len === v.length && len <= SHORT) {
      // As many bytes as UTF-16 units: every unit is ASCII (anything else takes 2 or 3 bytes a unit).
      const b = this.buf;
      const at = this.pos;
      for (let i = 0; i < len; i++) b[at + i] = v.charCodeAt(i);
    } else if (len > 0) this.buf.write(v, this.pos, len, 'utf8');
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
