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
});
