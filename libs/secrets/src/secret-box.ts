import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ApiError } from '@platform/errors';

/** One sealed value: statistics keeps these four as columns; the stored forms in `stored.ts` wrap them. */
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
 * AES-256-GCM sealing, the platform's one scheme for secrets at rest: a 96-bit random IV per value and
 * a 128-bit tag. The additional authenticated data (AAD) binds a ciphertext to the record it belongs to,
 * so a sealed value copied to another row (or domain, or column) does not open. The first key seals;
 * every key opens (rotation: the old keys go to SECRET_ENCRYPTION_PREVIOUS_KEYS).
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly current: { id: string; key: Buffer };

  constructor(keys: readonly Buffer[]) {
    if (!keys.length || keys.some((k) => k.length !== 32)) throw new Error('SecretBox needs 32-byte keys');
    this.keys = new Map(keys.map((k) => [keyId(k), k]));
    this.current = { id: keyId(keys[0]), key: keys[0] };
  }

  /** The id of the key that seals. */
  get currentKeyId(): string {
    return this.current.id;
  }

  sealText(text: string, aad: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return {
      key_id: this.current.id,
      iv: iv.toString('base64'),
      ciphertext: ciphertext.toString('base64'),
      auth_tag: cipher.getAuthTag().toString('base64'),
    };
  }

  /**
   * The plain text, or a 500 with a stable code: ERROR_SECRET_KEY_UNAVAILABLE when the sealing key is
   * not configured, ERROR_SECRET_UNREADABLE when the value was altered or belongs to another record.
   * Neither message carries any part of the secret.
   */
  openText(sealed: SealedSecret, aad: string): string {
    const key = this.keys.get(sealed.key_id);
    if (!key) {
      throw new ApiError(500, 'ERROR_SECRET_KEY_UNAVAILABLE', `The key that sealed this secret (${sealed.key_id}) is not configured.`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(sealed.auth_tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new ApiError(500, 'ERROR_SECRET_UNREADABLE', 'A stored secret does not open: it was altered or belongs to another record.');
    }
  }

  /** Seals a JSON value (statistics' secret_data; the stored format of its `secret` table). */
  seal(data: Record<string, unknown>, aad: string): SealedSecret {
    return this.sealText(JSON.stringify(data), aad);
  }

  open(sealed: SealedSecret, aad: string): Record<string, unknown> {
    return JSON.parse(this.openText(sealed, aad)) as Record<string, unknown>;
  }
}

const boxes = new WeakMap<readonly Buffer[], SecretBox>();

/** The SecretBox of a configuration's key list (`config.secretKeys`), made once per list. */
export function secretBoxFor(keys: readonly Buffer[]): SecretBox {
  let box = boxes.get(keys);
  if (!box) boxes.set(keys, (box = new SecretBox(keys)));
  return box;
}
