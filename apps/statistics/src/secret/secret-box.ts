import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ApiError } from '@platform/errors';

export interface SealedSecret {
  key_id: string;
  iv: string;
  ciphertext: string;
  auth_tag: string;
}

/** A short, stable name of a key (not the key): tells which key sealed a secret. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update('secret-key-id:').update(key).digest('hex').slice(0, 16);
}

/**
 * AES-256-GCM sealing of secret_data. The additional authenticated data binds a ciphertext to its
 * domain and secret id, so a sealed value copied to another row (or domain) does not open. The first
 * key seals; every key opens (rotation: put the old key in SECRET_ENCRYPTION_PREVIOUS_KEYS).
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly current: { id: string; key: Buffer };

  constructor(keys: Buffer[]) {
    if (!keys.length || keys.some((k) => k.length !== 32)) throw new Error('SecretBox needs 32-byte keys');
    this.keys = new Map(keys.map((k) => [keyId(k), k]));
    this.current = { id: keyId(keys[0]), key: keys[0] };
  }

  seal(data: Record<string, unknown>, aad: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
    return {
      key_id: this.current.id,
      iv: iv.toString('base64'),
      ciphertext: ciphertext.toString('base64'),
      auth_tag: cipher.getAuthTag().toString('base64'),
    };
  }

  open(sealed: SealedSecret, aad: string): Record<string, unknown> {
    const key = this.keys.get(sealed.key_id);
    if (!key) {
      throw new ApiError(500, 'ERROR_SECRET_KEY_UNAVAILABLE', `The key that sealed this secret (${sealed.key_id}) is not configured.`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.auth_tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as Record<string, unknown>;
  }
}
