import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Random bytes for identifiers, drawn from the CSPRNG 4 KiB at a time (as Node does for randomUUID):
 * one call into the system's generator per ~680 ids instead of one per id, which showed as 3–5 % of
 * the webhook worker's CPU (an id per event). Each byte is handed out once.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let offset = POOL_BYTES;

/** Prefixed random identifiers as upstream makes them: `pg-1a2b3c4d5e6f`. */
export function generateId(prefix: string, bytes = 6): string {
  if (bytes > 64) return `${prefix}-${randomBytes(bytes).toString('hex')}`;
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = `${prefix}-${pool.toString('hex', offset, offset + bytes)}`;
  offset += bytes;
  return id;
}

/** A URL-safe random secret (webhook access keys and the like): its own bytes, never pooled. */
export function generateSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
