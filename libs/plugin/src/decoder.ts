import type { Reader } from 'protobufjs';
import type { JsonObject, JsonValue } from './json';
import { DecodeError, ENTRY, ENTRY_KEY, ENTRY_VALUE, LIST_VALUES, under, V_BOOL, V_LIST, V_NULL, V_NUMBER, V_STRING, V_STRUCT, type FieldPlan, type MessagePlan } from './wire';

/** Reads a message of a plan from protobufjs' Reader (see codec.ts for the rules). */
export class Decoder {
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
