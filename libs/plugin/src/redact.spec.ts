import { redact, REDACTED, secretsOf } from './index';

describe('redaction of secrets in a plugin text', () => {
  it('collects every string and number of secret_data and credentials, and secret-looking option keys at any depth', () => {
    const secrets = secretsOf({
      options: { region: 'eu-west-1', api_key: 'opt-key-1', nested: { db: { password: 'pw-12345' } }, tokens: ['t-1111', 't-2222'], port: 5432 },
      secret_data: { a: 'sd-value', n: 123456, list: ['sd-in-list'], deep: { deeper: { x: 'sd-deep' } } },
      credentials: { password: 'cred-pass' },
      domain_id: 'domain-not-secret',
    });
    for (const s of ['opt-key-1', 'pw-12345', 't-1111', 't-2222', 'sd-value', '123456', 'sd-in-list', 'sd-deep', 'cred-pass']) expect(secrets).toContain(s);
    for (const s of ['eu-west-1', '5432', 'domain-not-secret']) expect(secrets).not.toContain(s);
  });

  it('replaces a secret and its JSON-escaped, URL-encoded and base64 forms; longest first', () => {
    const secret = 'p@ss "word"/+=';
    const secrets = secretsOf({ secret_data: { k: secret, short: 'p@ss' } });
    const text = `raw ${secret} json ${JSON.stringify(secret)} url ${encodeURIComponent(secret)} b64 ${Buffer.from(secret).toString('base64')}`;
    const out = redact(text, secrets);
    expect(out).not.toContain('p@ss');
    expect(out).not.toContain('word');
    expect(out).not.toContain(Buffer.from(secret).toString('base64').replace(/=+$/, ''));
    expect(out.split(REDACTED).length - 1).toBeGreaterThanOrEqual(4);
  });

  it('leaves values too short to be secrets (they would blank out ordinary words)', () => {
    expect(redact('the id is 1', secretsOf({ secret_data: { a: '1', b: 'id' } }))).toBe('the id is 1');
  });

  it('bounds the text, before and after', () => {
    const out = redact('a'.repeat(1_000_000), []);
    expect(out.length).toBe(1000);
  });

  it('bounds the work on a hostile request (a huge or deep secret_data)', () => {
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, `secret-${i}`]));
    expect(secretsOf({ secret_data: wide }).length).toBeLessThanOrEqual(512 * 4);
    let deep: Record<string, unknown> = { v: 'deep-secret' };
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    expect(() => secretsOf({ secret_data: deep })).not.toThrow();
  });
});

describe('redaction at the input bound', () => {
  it('a secret cut in two by the bound is dropped, not let through once the secrets before it shrank the text', () => {
    const secret = `S${'0123456789'.repeat(20)}`; // 201 characters
    const text = `${secret} `.repeat(200); // 40 200 characters, every one of them secret
    const out = redact(text, secretsOf({ secret_data: { s: secret } }));
    expect(out).not.toMatch(/S0123/);
    expect(out.replace(/\*\*\*|\s|…/g, '')).toBe('');
  });
});
