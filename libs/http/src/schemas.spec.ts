import { plainName, plainText, TAG_LIMITS, tags, UNSAFE_TEXT } from './schemas';

describe('shared request schemas (issue #27)', () => {
  it('plainName and plainText refuse control and bidirectional-override characters, and nothing else', () => {
    for (const bad of ['\u202Egnp.exe', 'a\u202Ab', 'a\u2067b', 'a\u061Cb', 'x\u200Ey', 'a\u0000b', 'a\rb', 'a\u009Bb', 'a\u2029b']) {
      expect([bad, plainName.safeParse(bad).success, plainText().safeParse(bad).success, UNSAFE_TEXT.test(bad)]).toEqual([bad, false, false, true]);
    }
    for (const good of ['Platform team', 'Équipe 東京', 'שלום', 'مرحبا', 'ops 🚀', 'a\u200Db']) expect([good, plainName.safeParse(good).success]).toEqual([good, true]);
    expect(plainText().safeParse('').success).toBe(true);
    expect(plainName.safeParse('').success).toBe(false);
  });

  it('tags: bounded count, value size and total size, measured as UTF-8 JSON', () => {
    const ok = (t: Record<string, unknown>) => tags.safeParse(t).success;
    expect(ok({ a: 'x'.repeat(TAG_LIMITS.valueBytes - 2) })).toBe(true);
    expect(ok({ a: 'x'.repeat(TAG_LIMITS.valueBytes - 1) })).toBe(false);
    expect(ok({ a: 'é'.repeat(TAG_LIMITS.valueBytes / 2) })).toBe(false);
    expect(ok(Object.fromEntries(Array.from({ length: TAG_LIMITS.count + 1 }, (_, i) => [`k${i}`, 1])))).toBe(false);
    expect(ok(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'.repeat(900)])))).toBe(false);
    const issue = tags.safeParse({ big: 'x'.repeat(5000) }).error!.issues[0];
    expect([issue.path, issue.message]).toEqual([['big'], `a tag value is at most ${TAG_LIMITS.valueBytes} bytes (as JSON)`]);
  });
});
