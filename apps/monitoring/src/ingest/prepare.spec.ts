import { sanitize, sanitizedShared } from './prepare';

/**
 * A remote plugin's delivery keeps its payload without a copy when the copy would be equal: the
 * stored raw_data is what sanitize makes in every case (U+0000 out of strings and keys, `__proto__`
 * as sanitize's copy treats it).
 */
describe('sanitizedShared', () => {
  it('answers the payload itself when nothing in it needs cleaning', () => {
    const payload = { alerts: [{ labels: { alertname: 'HighLoad' }, value: 4.2, firing: true, note: null }], list: ['a', 1, [2, 'b']] };
    expect(sanitizedShared(payload)).toBe(payload);
    expect(sanitizedShared(payload)).toEqual(sanitize(payload));
  });

  it('answers a cleaned copy when a string or a key holds U+0000, the payload untouched', () => {
    const payload = { a: [{ deep: ['x\u0000y'] }], b: 'ok' };
    const keyed = { ['k\u0000ey']: 1 };
    for (const p of [payload, keyed, ['\u0000'], 'a\u0000']) {
      const before = JSON.stringify(p);
      const out = sanitizedShared(p);
      expect(out).not.toBe(p);
      expect(out).toEqual(sanitize(p));
      expect(JSON.stringify(p)).toBe(before);
    }
    expect(sanitizedShared(payload)).toEqual({ a: [{ deep: ['xy'] }], b: 'ok' });
    expect(sanitizedShared(keyed)).toEqual({ key: 1 });
  });

  it('a `__proto__` key takes the copy, as sanitize does (the stored raw_data stays the same)', () => {
    const payload = JSON.parse('{"x": {"__proto__": {"polluted": true}, "y": 1}}') as Record<string, unknown>;
    const out = sanitizedShared(payload);
    expect(out).not.toBe(payload);
    expect(JSON.stringify(out)).toBe(JSON.stringify(sanitize(payload)));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
