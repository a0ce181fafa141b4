import { defaultDatabaseUrl, env, envBool, envInt, generateId, generateSecret, isoOrEmpty, MODULES } from './index';

describe('core', () => {
  it('reads env with defaults and types', () => {
    process.env.TEST_CORE_X = '12';
    expect(envInt('TEST_CORE_X', 1)).toBe(12);
    expect(envInt('TEST_CORE_MISSING', 3)).toBe(3);
    process.env.TEST_CORE_X = 'abc';
    expect(() => envInt('TEST_CORE_X', 1)).toThrow(/integer/);
    expect(env('TEST_CORE_MISSING', 'd')).toBe('d');
    expect(() => env('TEST_CORE_MISSING')).toThrow(/TEST_CORE_MISSING/);
    process.env.TEST_CORE_B = 'true';
    expect(envBool('TEST_CORE_B', false)).toBe(true);
  });

  it('makes prefixed ids and secrets', () => {
    expect(generateId('pg')).toMatch(/^pg-[0-9a-f]{12}$/);
    expect(generateId('pg')).not.toBe(generateId('pg'));
    // drawn from a pooled buffer: across many refills, every id is new and every length is kept
    const ids = Array.from({ length: 5000 }, (_, i) => generateId('x', 6 + (i % 70)));
    expect(new Set(ids).size).toBe(ids.length);
    ids.forEach((id, i) => expect(id).toMatch(new RegExp(`^x-[0-9a-f]{${2 * (6 + (i % 70))}}$`)));
    expect(generateSecret()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('formats timestamps as ISO UTC with milliseconds', () => {
    expect(isoOrEmpty(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)))).toBe('2024-01-02T03:04:05.006Z');
    expect(isoOrEmpty(null)).toBe('');
  });

  it('names every module with a database and port', () => {
    expect(Object.keys(MODULES)).toHaveLength(8);
    expect(defaultDatabaseUrl('cost-analysis')).toBe('postgresql://postgres@127.0.0.1:5432/platform_cost_analysis');
  });
});
