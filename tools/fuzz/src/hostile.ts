import fc from 'fast-check';
import { Raw, serialize, withKey } from './json';
import type { Field } from './vocab';

/** The body limit of every app (libs/http: 1 MiB). */
export const BODY_LIMIT = 1024 * 1024;

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Key strings with a prototype segment: as a whole key, dotted inside a path, or at its end. */
export function protoPaths(fields: Field[]): string[] {
  const json = fields.filter((f) => f.type === 'json' || f.type === 'json_array').map((f) => f.key);
  const some = json[0] ?? 'tags';
  return [
    '__proto__',
    'constructor',
    'prototype',
    '__proto__.x',
    '__proto__.domain_id',
    'constructor.prototype.x',
    'constructor.prototype.domain_id',
    `${some}.__proto__.x`,
    `${some}.__proto__`,
    `${some}.constructor.prototype.polluted`,
    `${some}.constructor`,
    `${some}.prototype`,
    'x.__proto__.status',
    'hasOwnProperty',
    'toString',
    'valueOf',
  ];
}

/** Values for a prototype key: what would do harm if it reached Object.prototype. */
const PROTO_VALUES: unknown[] = [
  { x: 1 },
  { domain_id: 'domain-fuzz-evil' },
  { polluted: true },
  { status: 'x', toString: 'x' },
  1,
  'x',
  [],
  null,
];

/** Regexes with catastrophic backtracking on a backtracking engine, and very long ones. */
export const REGEX_BOMBS = [
  // Exponential on any string of a few dozen characters without the final letter.
  '^(.|.|.)*(.|.)*Z$',
  // Exponential on any string at all, however short.
  '^(.?){40}.{40}$',
  '^(.*)*Z$',
  '^(.+)+Z$',
  '^(\\S|\\s|.)*!$',
  '([^Z]|.)*Z',
  // Exponential on their own kind of input.
  '(a+)+$',
  '^(a|a)*$',
  '(x+x+)+y',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '(.*a){20}',
  '(\\w+\\s?)*$',
  '((a*)*b)*c',
  'a'.repeat(10_000),
  '('.repeat(5_000) + ')'.repeat(5_000),
  '(a|'.repeat(2_000) + 'b' + ')'.repeat(2_000),
  '[' + 'a-z'.repeat(30_000) + ']',
  '\\',
  '(?<x>a)\\k<x>',
  '(?=a)*',
  'a{1,100000}{1,100000}',
  '[[:alpha:]]',
  '\\p{L}+',
  '(?i)A',
];

const WEIRD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  '\u202eevil\u202c',
  '\u200f\u05d0\u05d1',
  '👩‍👩‍👧‍👦',
  '\ufeffBOM',
  '\uffff\ufffe',
  'İı',
  'e\u0301\u0301\u0301',
  '%00',
  '%',
  '_',
  '\\',
  "'",
  '"',
  '$',
  '${x}',
  '../../etc/passwd',
  '\n\r\t',
  'a'.repeat(256),
  '0x1F',
  'NaN',
  'Infinity',
  'null',
  'true',
  '2024-13-45T99:99:99Z',
  '9999-12-31T23:59:59.999Z',
  '0000-01-01',
  'now-100000000000d',
  '*',
];

/** Invalid UTF-8 inside a JSON string (overlong, an encoded surrogate, past U+10FFFF, a lone continuation byte). */
const BAD_UTF8 = [
  Buffer.from([0x22, 0xc0, 0xaf, 0x22]),
  Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]),
  Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]),
  Buffer.from([0x22, 0x80, 0x22]),
  Buffer.from([0x22, 0xe0, 0x80, 0x80, 0x22]),
];

const EDGE_NUMBERS: unknown[] = [
  1e308,
  -1e308,
  5e-324,
  -0,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 63,
  1.5,
  -1,
  0,
  Raw.text('1e400'),
  Raw.text('-1e400'),
  Raw.text('123456789012345678901234567890'),
  Raw.text('1.0e-400'),
  Raw.text('-0.0'),
];

const WRONG_TYPES: unknown[] = [0, -1, 1.5, true, false, null, '', 'x', [], {}, [null], { '': null }, [[]], [{}]];

const DEEP_LEVELS = [64, 1_000, 10_000, 50_000];

/** `depth` levels of arrays, objects or both around a leaf. */
function deep(depth: number, shape: number): Raw {
  const open = ['[', '{"a":', '{"a":[', '{"__proto__":'][shape % 4];
  const close = [']', '}', ']}', '}'][shape % 4];
  return new Raw(Buffer.from(open.repeat(depth) + '1' + close.repeat(depth)), `${depth}-deep ${open}…1…${close}`);
}

function hugeArray(n: number, shape: number): Raw {
  const item = ['0', '"x"', '{}', '[]', 'null'][shape % 5];
  return new Raw(Buffer.from(`[${Array(n).fill(item).join(',')}]`), `array of ${n} × ${item}`);
}

function hugeString(n: number, shape: number): string {
  const unit = ['a', 'é', '\u0000', '.', '👍'][shape % 5];
  return unit.repeat(Math.ceil(n / unit.length));
}

export type MutationKind =
  | 'proto-key'
  | 'proto-string'
  | 'proto-key-string'
  | 'regex-bomb'
  | 'deep'
  | 'huge-array'
  | 'huge-string'
  | 'pad-to-limit'
  | 'wrong-type'
  | 'unicode'
  | 'bad-utf8'
  | 'number-edge'
  | 'dup-key'
  | 'drop-key'
  | 'unknown-key'
  | 'camel-key';

export interface Mutation {
  kind: MutationKind;
  /** Which node (DFS index, modulo the node count). */
  at: number;
  /** Which variant. */
  n: number;
}

const KINDS: { kind: MutationKind; weight: number }[] = [
  { kind: 'proto-key', weight: 6 },
  { kind: 'proto-string', weight: 6 },
  { kind: 'proto-key-string', weight: 4 },
  { kind: 'regex-bomb', weight: 5 },
  { kind: 'deep', weight: 3 },
  { kind: 'huge-array', weight: 1 },
  { kind: 'huge-string', weight: 1 },
  { kind: 'pad-to-limit', weight: 1 },
  { kind: 'wrong-type', weight: 6 },
  { kind: 'unicode', weight: 4 },
  { kind: 'bad-utf8', weight: 1 },
  { kind: 'number-edge', weight: 4 },
  { kind: 'dup-key', weight: 2 },
  { kind: 'drop-key', weight: 3 },
  { kind: 'unknown-key', weight: 2 },
  { kind: 'camel-key', weight: 3 },
];

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.oneof(...KINDS.map((k) => ({ weight: k.weight, arbitrary: fc.constant(k.kind) }))),
  at: fc.nat({ max: 10_000 }),
  n: fc.nat({ max: 10_000 }),
});

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Raw);

/** A copy that keeps own `__proto__` keys and shares Raw nodes. */
export function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (isObj(v)) {
    const out = {};
    for (const k of Object.keys(v)) withKey(out, k, clone(v[k]));
    return out as T;
  }
  return v;
}

type Slot = { parent: Record<string, unknown> | unknown[] | null; key: string | number; value: unknown };

/** Every node of a body (the root has no parent), depth first. */
function slots(root: unknown): Slot[] {
  const out: Slot[] = [{ parent: null, key: '', value: root }];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) {
      v.forEach((e, i) => {
        out.push({ parent: v, key: i, value: e });
        walk(e);
      });
    } else if (isObj(v)) {
      for (const k of Object.keys(v)) {
        out.push({ parent: v, key: k, value: v[k] });
        walk(v[k]);
      }
    }
  };
  walk(root);
  return out;
}

function put(s: Slot, value: unknown) {
  if (!s.parent) return;
  if (Array.isArray(s.parent)) s.parent[s.key as number] = value;
  else withKey(s.parent, s.key as string, value);
}

/** Renames key `from` of `obj` to `to`, in place and in order. */
function renameKey(obj: Record<string, unknown>, from: string, to: string) {
  const entries = Object.keys(obj).map((k) => [k === from ? to : k, obj[k]] as const);
  for (const k of Object.keys(obj)) delete obj[k];
  for (const [k, v] of entries) withKey(obj, k, v);
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length];

/**
 * Applies a mutation to `body` (a fresh copy the caller owns) and answers the new body and a short
 * description. Conditions of the query DSL get the regex bombs in their value with a regex operator.
 */
export function applyMutation(body: unknown, m: Mutation, fields: Field[]): { body: unknown; note: string } {
  const all = slots(body);
  const children = all.filter((s) => s.parent);
  const objects = all.filter((s) => isObj(s.value));
  const strings = children.filter((s) => typeof s.value === 'string');
  const target = children.length ? children[m.at % children.length] : undefined;
  const where = (s: Slot | undefined) => (s ? pathOf(body, s) : '(root)');
  const fieldKey = fields.length ? fields[m.n % fields.length].key : 'name';
  const needsObject: MutationKind[] = ['proto-key', 'proto-key-string', 'dup-key', 'unknown-key', 'unicode', 'camel-key'];
  if (!objects.length && needsObject.includes(m.kind)) return { body, note: `${m.kind}: no object in the body` };
  switch (m.kind) {
    case 'proto-key': {
      const o = objects[m.at % objects.length];
      const key = pick(PROTO_KEYS, m.n);
      withKey(o.value as Record<string, unknown>, key, clone(pick(PROTO_VALUES, m.n >> 2)));
      return { body, note: `${key} key in ${where(o.parent ? o : undefined)}` };
    }
    case 'proto-string': {
      const s = strings.length && m.n % 3 ? strings[m.at % strings.length] : target;
      const v = pick(protoPaths(fields), m.n);
      if (!s) return { body, note: 'no node' };
      put(s, v);
      return { body, note: `${JSON.stringify(v)} at ${where(s)}` };
    }
    case 'proto-key-string': {
      const withKeys = objects.filter((o) => Object.keys(o.value as object).length);
      const o = withKeys.length ? withKeys[m.at % withKeys.length] : objects[0];
      const obj = o.value as Record<string, unknown>;
      const keys = Object.keys(obj);
      const to = pick(protoPaths(fields), m.n);
      if (keys.length && m.n % 2) renameKey(obj, keys[m.n % keys.length], to);
      else withKey(obj, to, clone(pick(PROTO_VALUES, m.n >> 1)));
      return { body, note: `key ${JSON.stringify(to)} in ${where(o.parent ? o : undefined)}` };
    }
    case 'regex-bomb': {
      const conds = objects.filter((o) => typeof (o.value as Record<string, unknown>).key === 'string' && 'operator' in (o.value as object));
      const bomb = pick(REGEX_BOMBS, m.n);
      if (conds.length) {
        const c = conds[m.at % conds.length].value as Record<string, unknown>;
        const many = m.n % 4 === 0;
        c.operator = many ? 'regex_in' : 'regex';
        c.value = many ? [bomb, pick(REGEX_BOMBS, m.n + 1)] : bomb;
        if (m.n % 3 === 0) c.key = fieldKey;
        return { body, note: `${c.operator} ${describeBomb(bomb)} on ${String(c.key)}` };
      }
      const s = strings.length ? strings[m.at % strings.length] : target;
      if (!s) return { body, note: 'no node' };
      put(s, bomb);
      return { body, note: `regex ${describeBomb(bomb)} at ${where(s)}` };
    }
    case 'deep': {
      const d = pick(DEEP_LEVELS, m.n);
      const raw = deep(d, m.n >> 2);
      if (!target) return { body: raw, note: `root ${raw.label}` };
      put(target, raw);
      return { body, note: `${raw.label} at ${where(target)}` };
    }
    case 'huge-array': {
      const n = pick([1_000, 10_000, 100_000, 250_000, 600_000], m.n);
      const raw = hugeArray(n, m.n >> 3);
      if (!target) return { body: raw, note: raw.label };
      put(target, raw);
      return { body, note: `${raw.label} at ${where(target)}` };
    }
    case 'huge-string': {
      const n = pick([10_000, 100_000, 500_000, 1_100_000], m.n);
      const s = strings.length ? strings[m.at % strings.length] : target;
      if (!s) return { body, note: 'no node' };
      put(s, hugeString(n, m.n >> 2));
      return { body, note: `string of ${n} chars at ${where(s)}` };
    }
    case 'pad-to-limit': {
      // A string that brings the whole body to the limit: one byte under, at, one and 1000 past.
      const s = strings.length ? strings[m.at % strings.length] : target;
      if (!s) return { body, note: 'no node' };
      put(s, '');
      const base = serialize(body).length;
      const delta = pick([-1, 0, 1, 1000], m.n);
      const n = Math.max(0, BODY_LIMIT - base + delta);
      put(s, 'p'.repeat(n));
      return { body, note: `body padded to ${base + n} bytes (limit ${delta >= 0 ? '+' : ''}${delta}) at ${where(s)}` };
    }
    case 'wrong-type': {
      if (!target) return { body: pick(WRONG_TYPES, m.n), note: 'root replaced' };
      const v = clone(pick(WRONG_TYPES, m.n));
      put(target, v);
      return { body, note: `${JSON.stringify(v)} at ${where(target)}` };
    }
    case 'unicode': {
      const s = strings.length && m.n % 4 ? strings[m.at % strings.length] : target;
      const v = pick(WEIRD_STRINGS, m.n);
      if (s && m.n % 5 !== 0) {
        put(s, v);
        return { body, note: `${JSON.stringify(v)} at ${where(s)}` };
      }
      const o = objects[m.at % objects.length].value as Record<string, unknown>;
      const keys = Object.keys(o);
      if (keys.length) renameKey(o, keys[m.n % keys.length], v);
      else withKey(o, v, 'x');
      return { body, note: `key ${JSON.stringify(v)}` };
    }
    case 'bad-utf8': {
      const s = strings.length ? strings[m.at % strings.length] : target;
      const raw = new Raw(pick(BAD_UTF8, m.n), `invalid UTF-8 ${pick(BAD_UTF8, m.n).toString('hex')}`);
      if (!s) return { body, note: 'no node' };
      put(s, raw);
      return { body, note: `${raw.label} at ${where(s)}` };
    }
    case 'number-edge': {
      const v = pick(EDGE_NUMBERS, m.n);
      if (!target) return { body, note: 'no node' };
      const numbers = children.filter((s) => typeof s.value === 'number');
      const s = numbers.length && m.n % 2 ? numbers[m.at % numbers.length] : target;
      put(s, v);
      return { body, note: `${v instanceof Raw ? v.label : Object.is(v, -0) ? '-0' : String(v)} at ${where(s)}` };
    }
    case 'dup-key': {
      const withKeys = objects.filter((o) => Object.keys(o.value as object).length);
      const o = withKeys.length ? withKeys[m.at % withKeys.length] : objects[0];
      const obj = o.value as Record<string, unknown>;
      const keys = Object.keys(obj);
      const key = keys.length ? keys[m.n % keys.length] : 'domain_id';
      const second = clone(pick([...WRONG_TYPES, 'domain-fuzz-other', { __dup: true }], m.n >> 2));
      const bytes = serialize(obj);
      const raw = new Raw(
        Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from(`${keys.length ? ',' : ''}${JSON.stringify(key)}:`), serialize(second), Buffer.from('}')]),
        `object with ${JSON.stringify(key)} twice`,
      );
      if (!o.parent) return { body: raw, note: raw.label };
      put(o, raw);
      return { body, note: `${raw.label} at ${where(o)}` };
    }
    case 'drop-key': {
      const withKeys = objects.filter((o) => Object.keys(o.value as object).length);
      if (!withKeys.length) return { body, note: 'no key' };
      const o = withKeys[m.at % withKeys.length];
      const keys = Object.keys(o.value as object);
      const k = keys[m.n % keys.length];
      delete (o.value as Record<string, unknown>)[k];
      return { body, note: `without ${JSON.stringify(k)} in ${where(o.parent ? o : undefined)}` };
    }
    case 'unknown-key': {
      const o = objects[m.at % objects.length];
      const k = pick(['x_fuzz', 'domain', '$where', '$gt', '', ' ', 'domain_id '], m.n);
      withKey(o.value as Record<string, unknown>, k, 1);
      return { body, note: `unknown key ${JSON.stringify(k)} in ${where(o.parent ? o : undefined)}` };
    }
    case 'camel-key': {
      // protobuf's JSON name of a key (`filter_or` -> `filterOr`): renamed, or beside its proto name
      const withSnake = objects.filter((o) => Object.keys(o.value as object).some((k) => k.includes('_')));
      if (!withSnake.length) return { body, note: 'no snake_case key' };
      const o = withSnake[m.at % withSnake.length];
      const obj = o.value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => k.includes('_'));
      const k = keys[m.n % keys.length];
      const camel = k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
      if (m.n % 3 === 0) {
        withKey(obj, camel, clone(obj[k]));
        return { body, note: `${JSON.stringify(k)} also as ${JSON.stringify(camel)} in ${where(o.parent ? o : undefined)}` };
      }
      renameKey(obj, k, camel);
      return { body, note: `${JSON.stringify(k)} as ${JSON.stringify(camel)} in ${where(o.parent ? o : undefined)}` };
    }
  }
}

function describeBomb(b: string) {
  return b.length > 40 ? `${JSON.stringify(b.slice(0, 20))}…(${b.length} chars)` : JSON.stringify(b);
}

/** `query.filter[0].value` of a slot. */
function pathOf(root: unknown, s: Slot): string {
  const find = (v: unknown, prefix: string): string | undefined => {
    if (v === s.parent) return `${prefix}${typeof s.key === 'number' ? `[${s.key}]` : prefix ? `.${s.key}` : s.key}`;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const r = find(v[i], `${prefix}[${i}]`);
        if (r) return r;
      }
    } else if (isObj(v)) {
      for (const k of Object.keys(v)) {
        const r = find(v[k], prefix ? `${prefix}.${k}` : k);
        if (r) return r;
      }
    }
    return undefined;
  };
  return find(root, '') ?? '?';
}
