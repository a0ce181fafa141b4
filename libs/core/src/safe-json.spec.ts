import { Writable } from 'node:stream';
import { createLogger, inspectJson, isSafeKey, unsafeSegment } from './index';

describe('unsafe keys', () => {
  it('finds __proto__, constructor and prototype as keys or dotted segments', () => {
    for (const k of ['__proto__', 'constructor', 'prototype', '__proto__.x', 'a.constructor', 'tags.prototype.b']) expect(isSafeKey(k)).toBe(false);
    for (const k of ['tags', 'tags.env', '__proto', 'proto__', 'constructors', 'a.b.c', '']) expect(isSafeKey(k)).toBe(true);
    expect(unsafeSegment('a.__proto__.b')).toBe('__proto__');
  });
});

describe('inspectJson', () => {
  const deep = (n: number) => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = i % 2 ? { a: v } : [v];
    return v;
  };

  it('walks a value of any depth without recursion and names the first level too deep', () => {
    const value = JSON.parse('{"query":{"filter":[{"v":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}]}}');
    const p = inspectJson(value, { maxDepth: 32 });
    expect(p?.kind).toBe('depth');
    expect(p?.path).toMatch(/^query\.filter\[0\]\.v(\[0\])+$/);
    expect(inspectJson(deep(32), { maxDepth: 32 })).toBeUndefined();
    expect(inspectJson(deep(33), { maxDepth: 32 })?.kind).toBe('depth');
  });

  it('refuses unsafe keys at any depth, naming where', () => {
    const body = JSON.parse('{"query":{"filter":[{"k":"tags","o":"match","v":{"__proto__.x":1}}]}}');
    expect(inspectJson(body, { maxDepth: 32, refuseUnsafeKeys: true })).toEqual({
      kind: 'unsafe_key',
      path: 'query.filter[0].v.__proto__.x',
      reason: '"__proto__" is not allowed as a key',
    });
    expect(inspectJson(JSON.parse('{"tags":{"constructor":{"prototype":1}}}'), { maxDepth: 32, refuseUnsafeKeys: true })?.path).toBe('tags.constructor');
    expect(inspectJson(body, { maxDepth: 32 })).toBeUndefined();
    expect(inspectJson({ tags: { env: 'prod' }, list: [1, { a: null }] }, { maxDepth: 32, refuseUnsafeKeys: true })).toBeUndefined();
  });

  it('refuses NUL characters and lone UTF-16 surrogates (which PostgreSQL cannot store) in strings and keys, when asked', () => {
    const limits = { maxDepth: 32, refuseNul: true };
    expect(inspectJson(JSON.parse('{"a":["x","\\ud800"]}'), limits)).toMatchObject({ kind: 'surrogate', path: 'a[1]' });
    expect(inspectJson(JSON.parse('{"a":{"\\udc00b":1}}'), limits)).toMatchObject({ kind: 'surrogate', path: 'a.\\udc00b' });
    expect(inspectJson(JSON.parse('{"a":"x\\u0000"}'), limits)).toMatchObject({ kind: 'nul', path: 'a' });
    expect(inspectJson({ a: '\u{1F600} ok', b: ['é'] }, limits)).toBeUndefined();
    expect(inspectJson(JSON.parse('{"a":"\\ud800"}'), { maxDepth: 32 })).toBeUndefined();
  });
});

describe('log redaction', () => {
  it('never writes a field that holds a secret', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
    const log = createLogger('redact', 'info', sink);
    log.info({ password: 'hunter2', body: { secret_data: { key: 'sk-live-1' }, token: 'tok-abc', secret_key: 'sup-key-9' }, headers: { authorization: 'Bearer eyJ.x.y' }, user_id: 'u1' }, 'hello');
    const text = lines.join('');
    for (const s of ['hunter2', 'sk-live-1', 'tok-abc', 'eyJ.x.y', 'sup-key-9']) expect(text).not.toContain(s);
    expect(text).toContain('u1');
    expect(text).toContain('[REDACTED]');
  });
});
