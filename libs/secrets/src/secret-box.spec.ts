import { randomBytes } from 'node:crypto';
import { ApiError } from '@platform/errors';
import { DEV_SECRET_ENCRYPTION_KEY, loadSecretKeys, parseKey, usesDevelopmentKey } from './keys';
import { keyId, SecretBox, secretBoxFor } from './secret-box';

describe('SecretBox (AES-256-GCM)', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('seals and opens; the ciphertext reveals nothing and differs each time', () => {
    const box = new SecretBox([k1]);
    const a = box.seal({ password: 'p@ss' }, 'd1:secret-1');
    const b = box.seal({ password: 'p@ss' }, 'd1:secret-1');
    expect(Object.keys(a).sort()).toEqual(['auth_tag', 'ciphertext', 'iv', 'key_id']);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(JSON.stringify(a)).not.toContain('p@ss');
    expect(a.key_id).toBe(keyId(k1));
    expect(box.currentKeyId).toBe(keyId(k1));
    expect(box.open(a, 'd1:secret-1')).toEqual({ password: 'p@ss' });
    expect(box.openText(box.sealText('', 'x'), 'x')).toBe('');
  });

  it('does not open under another AAD, nor when tampered with, and says so without the secret', () => {
    const box = new SecretBox([k1]);
    const s = box.seal({ password: 'hunter2' }, 'd1:secret-1');
    const flipped = Buffer.from(s.ciphertext, 'base64');
    flipped[0] ^= 1;
    for (const [sealed, aad] of [
      [s, 'd2:secret-1'],
      [s, 'd1:secret-2'],
      [{ ...s, ciphertext: flipped.toString('base64') }, 'd1:secret-1'],
      [{ ...s, auth_tag: '' }, 'd1:secret-1'],
      [{ ...s, iv: '' }, 'd1:secret-1'],
    ] as const) {
      let err: unknown;
      try {
        box.open(sealed, aad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 500, code: 'ERROR_SECRET_UNREADABLE' });
      expect(String((err as Error).message)).not.toContain('hunter2');
    }
  });

  it("opens what statistics' own SecretBox sealed before the move (stored format unchanged)", () => {
    // Sealed by apps/statistics/src/secret/secret-box.ts as it was before libs/secrets existed.
    const key = Buffer.from('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', 'hex');
    const stored = {
      key_id: '32fc9bb80298e993',
      iv: 'rBT1eOqHP2+IVK+I',
      ciphertext: 'lndevdJ8X8sz+RiTc2q3AZSP2Tp0PTdKdEpSTx3y3Pe4KnZTE2cmHUo2CDd5WC4yOVHi9Gzisw==',
      auth_tag: 'qlJw0bJHdlx1tsEYwWbxTw==',
    };
    expect(keyId(key)).toBe(stored.key_id);
    expect(new SecretBox([key]).open(stored, 'd1:secret-0123456789ab')).toEqual({ username: 'postgres', password: 'hunter2-not-stored' });
  });

  it('opens with a previous key after rotation and says which key is missing', () => {
    const old = new SecretBox([k1]).seal({ a: 1 }, 'x');
    const rotated = new SecretBox([k2, k1]);
    expect(rotated.open(old, 'x')).toEqual({ a: 1 });
    expect(rotated.seal({ a: 1 }, 'x').key_id).toBe(keyId(k2));
    expect(() => new SecretBox([k2]).open(old, 'x')).toThrow(/not configured/);
    expect(() => new SecretBox([])).toThrow(/32-byte/);
    expect(() => new SecretBox([randomBytes(16)])).toThrow(/32-byte/);
  });

  it('makes one box per key list', () => {
    const keys = [k1];
    expect(secretBoxFor(keys)).toBe(secretBoxFor(keys));
    expect(secretBoxFor([k2, k1]).currentKeyId).toBe(keyId(k2));
  });

  it('reads the keys from the environment, with a development key only outside production', () => {
    const hex = k1.toString('hex');
    expect(loadSecretKeys({ SECRET_ENCRYPTION_KEY: hex })[0].equals(k1)).toBe(true);
    expect(loadSecretKeys({ SECRET_ENCRYPTION_KEY: k1.toString('base64') })[0].equals(k1)).toBe(true);
    expect(loadSecretKeys({ NODE_ENV: 'development' })[0].equals(parseKey(DEV_SECRET_ENCRYPTION_KEY, 'x'))).toBe(true);
    expect(usesDevelopmentKey({ NODE_ENV: 'development' })).toBe(true);
    expect(usesDevelopmentKey({ SECRET_ENCRYPTION_KEY: hex })).toBe(false);
    expect(() => loadSecretKeys({ NODE_ENV: 'production' })).toThrow(/SECRET_ENCRYPTION_KEY is required/);
    expect(() => loadSecretKeys({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: ' ' })).toThrow(/SECRET_ENCRYPTION_KEY is required/);
    expect(() => loadSecretKeys({ SECRET_ENCRYPTION_KEY: 'short' })).toThrow(/32 bytes/);
    expect(() => loadSecretKeys({ SECRET_ENCRYPTION_KEY: hex, SECRET_ENCRYPTION_PREVIOUS_KEYS: 'short' })).toThrow(/PREVIOUS_KEYS\[0\] must be 32 bytes/);
    const both = loadSecretKeys({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: hex, SECRET_ENCRYPTION_PREVIOUS_KEYS: ` ${k2.toString('hex')}, ` });
    expect(both.map((k) => k.toString('hex'))).toEqual([hex, k2.toString('hex')]);
  });
});
