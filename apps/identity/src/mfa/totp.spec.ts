import { base32Decode, base32Encode, totpAt, verifyTotp } from './totp';

describe('totp', () => {
  // RFC 6238 appendix B test vectors (SHA1, secret "12345678901234567890"), last 6 digits.
  const secret = base32Encode(Buffer.from('12345678901234567890'));
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ])('matches the RFC vector at %i s', (t, code) => {
    expect(totpAt(secret, Math.floor(t / 30))).toBe(code);
    expect(verifyTotp(secret, code, t * 1000)).toBe(Math.floor(t / 30));
  });

  it('accepts one step of clock skew and nothing more', () => {
    const now = 1_700_000_000_000;
    const c = Math.floor(now / 30000);
    expect(verifyTotp(secret, totpAt(secret, c - 1), now)).toBe(c - 1);
    expect(verifyTotp(secret, totpAt(secret, c + 2), now)).toBeUndefined();
    expect(verifyTotp(secret, 'abcdef', now)).toBeUndefined();
  });

  it('round-trips base32', () => {
    const buf = Buffer.from([0, 1, 2, 250, 255, 7, 9]);
    expect(base32Decode(base32Encode(buf))).toEqual(buf);
  });
});
