import type { Pool } from 'pg';
import { openText, sealColumn, sealText, secretAad, secretBoxFor, type SealedColumn, type SealReport } from '@platform/secrets';

/**
 * A user's TOTP secret at rest: sealed with libs/secrets (AES-256-GCM), bound to its domain and user,
 * so it opens only in its own row. Written by the admin CLI's `user mfa-enable`, opened only to check
 * a verify_code at token issue.
 */
export const mfaSecretColumn: SealedColumn = {
  table: 'user',
  key: ['domain_id', 'user_id'],
  column: 'mfa_secret',
  form: 'text',
  aad: (r) => secretAad('identity:user.mfa_secret', r.domain_id, r.user_id),
};

export function sealMfaSecret(keys: readonly Buffer[], domainId: string, userId: string, secret: string): string {
  return sealText(secretBoxFor(keys), secret, mfaSecretColumn.aad({ domain_id: domainId, user_id: userId }));
}

/** The base32 TOTP secret of a user row (a row from before sealing is read as it is). */
export function openMfaSecret(keys: readonly Buffer[], user: { domain_id: string; user_id: string; mfa_secret: string | null }): string {
  return openText(secretBoxFor(keys), user.mfa_secret ?? '', mfaSecretColumn.aad({ domain_id: user.domain_id, user_id: user.user_id }));
}

/**
 * The backfill (`admin secrets seal`): seals every mfa_secret still stored in plain text, and seals again
 * with the current key those sealed with a previous one. Idempotent.
 */
export function sealMfaSecrets(pool: Pool, keys: readonly Buffer[]): Promise<SealReport> {
  return sealColumn(pool, secretBoxFor(keys), mfaSecretColumn);
}
