import { randomBytes } from 'node:crypto';
import { DEV_SECRET_ENCRYPTION_KEY, loadSecretKeys, parseKey } from '../config';
import { keyId, SecretBox } from './secret-box';

describe('SecretBox (AES-256-GCM)', () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('seals and opens; the ciphertext reveals nothing and differs each time', () => {
    const box = new SecretBox([k1]);
    const a = box.seal({ password: 'p@ss' }, 'd1:secret-1');
    const b = box.seal({ password: 'p@ss' }, 'd1:secret-1');
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(JSON.stringify(a)).not.toContain('p@ss');
    expect(a.key_id).toBe(keyId(k1));
    expect(box.open(a, 'd1:secret-1')).toEqual({ password: 'p@ss' });
  });

  it('does not open under another domain or secret id, nor when tampered with', () => {
    const box = new SecretBox([k1]);
    const s = box.seal({ password: 'p' }, 'd1:secret-1');
    expect(() => box.open(s, 'd2:secret-1')).toThrow();
    expect(() => box.open(s, 'd1:secret-2')).toThrow();
    const flipped = Buffer.from(s.ciphertext, 'base64');
    flipped[0] ^= 1;
    expect(() => box.open({ ...s, ciphertext: flipped.toString('base64') }, 'd1:secret-1')).toThrow();
  });

  it('opens with a previous key after rotation and says which key is missing', () => {
    const old = new SecretBox([k1]).seal({ a: 1 }, 'x');
    expect(new SecretBox([k2, k1]).open(old, 'x')).toEqual({ a: 1 });
    expect(() => new SecretBox([k2]).open(old, 'x')).toThrow(/not configured/);
  });

  it('reads the key from configuration, with a development default only outside production', () => {
    const hex = k1.toString('hex');
    expect(loadSecretKeys({ SECRET_ENCRYPTION_KEY: hex })[0].equals(k1)).toBe(true);
    expect(loadSecretKeys({ SECRET_ENCRYPTION_KEY: k1.toString('base64') })[0].equals(k1)).toBe(true);
    expect(loadSecretKeys({ NODE_ENV: 'development' })[0].equals(parseKey(DEV_SECRET_ENCRYPTION_KEY, 'x'))).toBe(true);
    expect(() => loadSecretKeys({ NODE_ENV: 'production' })).toThrow(/SECRET_ENCRYPTION_KEY is required/);
    expect(() => loadSecretKeys({ SECRET_ENCRYPTION_KEY: 'short' })).toThrow(/32 bytes/);
    const both = loadSecretKeys({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: hex, SECRET_ENCRYPTION_PREVIOUS_KEYS: k2.toString('hex') });
    expect(both.map((k) => k.toString('hex'))).toEqual([hex, k2.toString('hex')]);
  });
});
