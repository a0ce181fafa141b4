import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * A supervisor's secret_key is kept only as a salted scrypt digest (`scrypt$<salt>$<hash>`, hex): a
 * copy of the database does not give the key, even a short one, cheaply. Never logged or answered.
 */
const KEY_LENGTH = 32;
const COST = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function derive(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, KEY_LENGTH, COST, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function digestSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('hex')}$${(await derive(secret, salt)).toString('hex')}`;
}

/** True when `secret` is the one `digest` was made from (constant-time comparison). */
export async function secretMatches(secret: string, digest: string): Promise<boolean> {
  const [kind, salt, hash] = digest.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'hex');
  const given = await derive(secret, Buffer.from(salt, 'hex'));
  return expected.length === given.length && timingSafeEqual(expected, given);
}
