import { createHmac } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * The current RFC 6238 code (HMAC-SHA1, 30 s, 6 digits) of a base32 secret, as an authenticator app
 * shows it: what a test types when identity asks for the MFA code.
 */
export function totpNow(secret: string, nowMs = Date.now()): string {
  let bits = 0;
  let value = 0;
  const key: number[] = [];
  for (const ch of secret.replace(/=+$/, '').toUpperCase()) {
    value = (value << 5) | ALPHABET.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      key.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(nowMs / 30_000)));
  const h = createHmac('sha1', Buffer.from(key)).update(msg).digest();
  const offset = h[h.length - 1] & 15;
  return String((h.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
