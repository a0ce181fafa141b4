import { Writer } from 'protobufjs';
import { DecodeError, EncodeError, rpcMethod, type CostAnalysis, type Monitoring } from './index';

/**
 * The codec: google.protobuf.Struct ↔ plain JSON done right (null, nested lists, numbers), keys that
 * are never data kept as own data properties (no prototype is touched), depth bounds both ways, and
 * a plugin's garbage refused with the field it is in.
 */
const getData = rpcMethod<CostAnalysis.GetDataRequest, CostAnalysis.GetDataRequestInput, CostAnalysis.CostsInfo, CostAnalysis.CostsInfoInput>('spaceone.api.cost_analysis.plugin.Cost', 'get_data');
const parse = rpcMethod<Monitoring.ParseRequest, Monitoring.ParseRequestInput, Monitoring.EventsInfo, Monitoring.EventsInfoInput>('spaceone.api.monitoring.plugin.Event', 'parse');
const roundTrip = (options: unknown) => getData.request.decode(getData.request.encode({ options: options as never })).options;

describe('Struct ↔ JSON', () => {
  it('keeps every JSON value: null, booleans, numbers (negative, fractional, large), strings, nested lists and objects', () => {
    const value = {
      n: null,
      t: true,
      f: false,
      zero: 0,
      neg: -12.5,
      big: 2 ** 53 - 1,
      tiny: 5e-324,
      s: 'héllo ✓ 𝄞',
      empty: '',
      list: [1, [2, [3, null, { deep: ['x'] }]], {}, []],
      obj: { a: { b: { c: [] } } },
    };
    expect(roundTrip(value)).toEqual(value);
  });

  it('writes strings as UTF-8 byte for byte at every length: ASCII, accents, CJK, emoji, a lone surrogate, keys too', () => {
    const strings = ['a', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33), 'é', 'aé', `${'a'.repeat(31)}é`, '日本語', '😀', 'a😀b', '\ud800', 'a\udc00', '\u007f\u0080'];
    for (const s of strings) {
      const utf8 = Buffer.from(s); // a lone surrogate is U+FFFD, as Buffer writes it
      const bytes = getData.request.encode({ options: { [s]: s } });
      const key = Buffer.concat([Buffer.from([0x0a, utf8.length]), utf8]); // Struct entry key (field 1)
      const value = Buffer.concat([Buffer.from([0x1a, utf8.length]), utf8]); // Value string_value (field 3)
      expect([s, bytes.includes(key), bytes.includes(value)]).toEqual([s, true, true]);
      expect(roundTrip({ [s]: s })).toEqual({ [utf8.toString()]: utf8.toString() });
    }
  });

  it('absent Structs decode as {}, absent scalars as their defaults, absent messages as absent', () => {
    expect(getData.request.decode(getData.request.encode({}))).toEqual({ options: {}, secret_data: {}, schema: '', task_options: {}, domain_id: '' });
  });

  it('__proto__, constructor and prototype keys are own data properties; no prototype is changed', () => {
    const input = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 2}}, "prototype": 3}');
    const out = roundTrip(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe(JSON.stringify(input));
  });

  it('undefined is left out of objects and null in lists (as JSON.stringify does); what is not JSON is refused, naming the key', () => {
    expect(roundTrip({ a: undefined, b: [undefined, 1] })).toEqual({ b: [null, 1] });
    for (const [bad, why] of [
      [{ d: new Date(0) }, /options\.d: an object of a class is not JSON/],
      [{ f: () => 1 }, /options\.f: a function is not JSON/],
      [{ n: [1, Number.NaN] }, /options\.n\[1\]: must be a finite number/],
      [{ i: Infinity }, /options\.i: must be a finite number/],
      [{ b: BigInt(1) }, /options\.b: a bigint is not JSON/],
    ] as const) {
      expect(() => getData.request.encode({ options: bad as never })).toThrow(why);
    }
  });

  it('refuses nesting deeper than the bound when encoding, cycles included', () => {
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < 100; i++) deep = (deep.a = {}) as Record<string, unknown>;
    expect(() => getData.request.encode({ options: top as never })).toThrow(EncodeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => getData.request.encode({ options: cycle as never })).toThrow(/nested deeper than 64 levels/);
    const shallow = rpcMethod('spaceone.api.cost_analysis.plugin.Cost', 'get_data', 200);
    expect(() => shallow.request.encode({ options: top })).not.toThrow();
  });

  it('a Struct number that is not finite (a plugin can send one) decodes as null', () => {
    const value = Writer.create().uint32((2 << 3) | 1).double(Number.NaN).finish();
    const entry = Writer.create().uint32((1 << 3) | 2).string('x').uint32((2 << 3) | 2).bytes(value).finish();
    const struct = Writer.create().uint32((1 << 3) | 2).bytes(entry).finish();
    const msg = Writer.create().uint32((1 << 3) | 2).bytes(struct).finish();
    expect(getData.request.decode(msg).options).toEqual({ x: null });
  });
});

describe('decoding untrusted bytes', () => {
  it('refuses a known field with the wrong wire type, naming it', () => {
    const bytes = Writer.create().uint32((1 << 3) | 2).fork().uint32((1 << 3) | 0).uint32(5).ldelim().finish(); // results[0].cost as a varint
    expect(() => getData.response.decode(bytes)).toThrow(new DecodeError('results[0].cost', 'wire type 0, expected 1'));
  });

  it('refuses truncated messages and lengths past the end', () => {
    const good = getData.response.encode({ results: [{ cost: 1, provider: 'aws' }] });
    expect(() => getData.response.decode(good.subarray(0, good.length - 2))).toThrow(DecodeError);
    expect(() => getData.response.decode(Buffer.from([0x0a, 0x7f, 0x00]))).toThrow(/runs past the end/);
  });

  it('refuses a Struct nested past the bound without recursing into it (no stack overflow at any depth)', () => {
    let inner: Uint8Array = new Uint8Array(0);
    for (let i = 0; i < 3000; i++) {
      const value = Writer.create().uint32((6 << 3) | 2).bytes(Writer.create().uint32((1 << 3) | 2).bytes(inner).finish()).finish(); // list_value: [ ...inner ]
      inner = value;
    }
    const entry = Writer.create().uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 2).bytes(inner).finish();
    const msg = Writer.create().uint32((1 << 3) | 2).bytes(Writer.create().uint32((1 << 3) | 2).bytes(entry).finish()).finish();
    expect(() => getData.request.decode(msg)).toThrow(/nested deeper than 64 levels/);
  });

  it('skips fields it does not know (a newer plugin), and decodes enums by name (the number when unknown)', () => {
    const event = Writer.create().uint32((1 << 3) | 2).string('k').uint32((5 << 3) | 0).int32(3).uint32((99 << 3) | 2).string('new field').finish();
    const unknownSeverity = Writer.create().uint32((5 << 3) | 0).int32(42).finish();
    const msg = Writer.create().uint32((1 << 3) | 2).bytes(event).uint32((1 << 3) | 2).bytes(unknownSeverity).finish();
    const decoded = parse.response.decode(msg);
    expect(decoded.results.map((e) => [e.event_key, e.severity])).toEqual([['k', 'WARNING'], ['', 42]]);
    expect(decoded.results[0]).not.toHaveProperty('new field');
  });

  it('refuses an enum name that does not exist when encoding', () => {
    expect(() => parse.response.encode({ results: [{ severity: 'SEVERE' as never }] })).toThrow(/results\[0\]\.severity: must be one of NONE, CRITICAL/);
  });

  it('writes every scalar as protobuf does (checked against protobufjs\' Writer): negative int32, float, bool, enums, UTF-8', () => {
    const metric = rpcMethod('spaceone.api.monitoring.plugin.Metric', 'get_data');
    const log = rpcMethod('spaceone.api.monitoring.plugin.Log', 'list');
    for (const period of [-1, -5, -(2 ** 31), 1, 127, 128, 16_384, 2 ** 31 - 1]) {
      const expected = Writer.create().uint32((4 << 3) | 2).string('cpu ✓ 𝄞').uint32((7 << 3) | 0).int32(period).finish();
      expect(metric.request.encode({ metric: 'cpu ✓ 𝄞', period })).toEqual(Buffer.from(expected));
      expect((metric.request.decode(expected) as { period: number }).period).toBe(period);
    }
    const sort = Writer.create().uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 0).bool(true).finish();
    expect(log.request.encode({ sort: { key: 'k', desc: true }, limit: 3 })).toEqual(Buffer.from(Writer.create().uint32((12 << 3) | 2).bytes(sort).uint32((13 << 3) | 0).int32(3).finish()));
    const event = Writer.create().uint32((5 << 3) | 0).int32(5).finish();
    expect(parse.response.encode({ results: [{ severity: 'NOT_AVAILABLE' }] })).toEqual(Buffer.from(Writer.create().uint32((1 << 3) | 2).bytes(event).finish()));
    const big = 'x'.repeat(300) + 'é'.repeat(100);
    expect(getData.request.decode(getData.request.encode({ options: { big, [big]: [big] } })).options).toEqual({ big, [big]: [big] });
  });

  it('encodes what upstream sends byte for byte: proto3 defaults are not written', () => {
    expect(getData.response.encode({ results: [{}] })).toEqual(Buffer.from([0x0a, 0x00]));
    expect(getData.response.encode({ results: [{ cost: 1.5, provider: 'aws' }] }).toString('hex')).toBe('0a0e09000000000000f83f2203617773');
  });
});
