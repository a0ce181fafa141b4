import { Enum, Type, type Field } from 'protobufjs';

// What the decoder and the encoder share: the plans of the message types (their fields, resolved once
// from the descriptor), the wire's constants and the codec's errors. See codec.ts.

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
export function under<E>(e: E, key: string | number): E {
  return e instanceof DecodeError || e instanceof EncodeError ? (e.under(key) as E) : e;
}

export const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;
// Tags of google.protobuf.Struct (fields = 1, a map entry of key = 1 and value = 2), ListValue
// (values = 1) and Value (null_value = 1, number_value = 2, string_value = 3, bool_value = 4,
// struct_value = 5, list_value = 6).
export const ENTRY = (1 << 3) | WIRE.bytes;
export const ENTRY_KEY = (1 << 3) | WIRE.bytes;
export const ENTRY_VALUE = (2 << 3) | WIRE.bytes;
export const LIST_VALUES = (1 << 3) | WIRE.bytes;
export const V_NULL = (1 << 3) | WIRE.varint;
export const V_NUMBER = (2 << 3) | WIRE.fixed64;
export const V_STRING = (3 << 3) | WIRE.bytes;
export const V_BOOL = (4 << 3) | WIRE.varint;
export const V_STRUCT = (5 << 3) | WIRE.bytes;
export const V_LIST = (6 << 3) | WIRE.bytes;
export const STRUCT = '.google.protobuf.Struct';
export const LIST = '.google.protobuf.ListValue';
export const VALUE = '.google.protobuf.Value';
export const EMPTY = '.google.protobuf.Empty';

export type Kind = 'string' | 'double' | 'float' | 'int32' | 'uint32' | 'bool' | 'enum' | 'struct' | 'list' | 'value' | 'message';

export interface FieldPlan {
  name: string;
  id: number;
  kind: Kind;
  wire: number;
  repeated: boolean;
  enumType?: Enum;
  message?: MessagePlan;
}

export interface MessagePlan {
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
export function planOf(type: Type): MessagePlan {
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

/** A plain object (what JSON.parse makes), not an instance of a class. */
export const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};
