import { resources } from '@opentelemetry/sdk-node';
import { PlatformSpan, newSpanId, newTraceId, type SpanShared } from './span';
import { SCOPE } from './tracer';

const shared: SpanShared = {
  sink: { add: () => {} },
  resource: resources.resourceFromAttributes({ 'service.name': 'identity' }),
  scope: SCOPE,
  attributeCountLimit: 4,
  attributeValueLengthLimit: 8,
};
const span = () => new PlatformSpan(shared, 'op', 0, newTraceId(), newSpanId(), 1, undefined, undefined, undefined, undefined);

describe('PlatformSpan attributes', () => {
  it("keeps keys named like Object's own properties as plain attributes; the prototype never changes", () => {
    const s = span();
    s.setAttribute('__proto__', 'polluted').setAttribute('constructor', 'c').setAttribute('toString', 't');
    expect(Object.getPrototypeOf(s.attributes)).toBe(Object.prototype);
    expect(Object.keys(s.attributes)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getOwnPropertyDescriptor(s.attributes, '__proto__')?.value).toBe('polluted');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // `constructor` and `toString` were counted as new attributes (not taken for existing ones)
    s.setAttribute('a', 1).setAttribute('b', 2);
    expect(Object.keys(s.attributes)).toEqual(['__proto__', 'constructor', 'toString', 'a']);
  });

  it('bounds the count and the length of attributes', () => {
    const s = span();
    s.setAttributes({ a: 'x'.repeat(20), b: 1, c: true, d: 2, e: 3 });
    expect(s.attributes).toEqual({ a: 'x'.repeat(8), b: 1, c: true, d: 2 });
    s.setAttribute('a', 'short');
    expect(s.attributes.a).toBe('short');
  });
});
