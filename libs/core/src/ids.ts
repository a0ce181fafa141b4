import { randomBytes } from 'node:crypto';

/** Prefixed random identifiers as upstream makes them: `pg-1a2b3c4d5e6f`. */
export function generateId(prefix: string, bytes = 6): string {
  return `${prefix}-${randomBytes(bytes).toString('hex')}`;
}

/** A URL-safe random secret (webhook access keys and the like). */
export function generateSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
