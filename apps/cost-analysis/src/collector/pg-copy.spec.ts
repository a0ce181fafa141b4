import { copyJson, copyText, CopyValueError } from './pg-copy';

describe('COPY text values', () => {
  it('writes an empty object as {} whatever its prototype, and any other value as its JSON', () => {
    expect(copyJson({})).toBe('{}');
    expect(copyJson(Object.create(null))).toBe('{}');
    const own = Object.create(null) as Record<string, unknown>;
    own['__proto__'] = 'x';
    expect(copyJson(own)).toBe('{"__proto__":"x"}');
    expect(copyJson({ a: 'tab\there' })).toBe('{"a":"tab\\\\there"}');
    expect(copyJson([])).toBe('[]');
    expect(copyJson(Object.create({ inherited: 1 }))).toBe('{}');
  });

  it('refuses what PostgreSQL cannot store', () => {
    expect(() => copyJson({ a: '\u0000' })).toThrow(CopyValueError);
    expect(() => copyText('a\u0000b')).toThrow(CopyValueError);
    expect(copyText('back\\slash\nline')).toBe('back\\\\slash\\nline');
  });

  it('escapes exactly the four special characters, other control characters pass as they are', () => {
    expect(copyText('a\tb\rc\nd\\e')).toBe('a\\tb\\rc\\nd\\\\e');
    expect(copyText('\r')).toBe('\\r');
    expect(copyText('end\\')).toBe('end\\\\');
    expect(copyText('vt\u000bff\u000cbell\u0007')).toBe('vt\u000bff\u000cbell\u0007');
    expect(copyText('plain-value_1.2 é')).toBe('plain-value_1.2 é');
    expect(copyText('')).toBe('');
    expect(copyText(null)).toBe('\\N');
  });
});
