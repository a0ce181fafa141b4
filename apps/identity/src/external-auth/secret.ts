import type { Pool } from 'pg';
import { openJson, sealColumn, sealJson, secretAad, secretBoxFor, type SealedColumn, type SealedJson, type SealReport } from '@platform/secrets';

/**
 * A domain's external-auth `secret_data` (the OIDC client_secret) at rest: sealed with libs/secrets
 * (AES-256-GCM), bound to its domain, so it opens only in its own row. Never answered by the API.
 */
export const externalAuthSecretColumn: SealedColumn = {
  table: 'external_auth',
  key: ['domain_id'],
  column: 'secret_data',
  form: 'json',
  aad: (r) => secretAad('identity:external_auth.secret_data', r.domain_id),
};

export function sealExternalAuthSecret(keys: readonly Buffer[], domainId: string, secret: Record<string, unknown>): SealedJson {
  return sealJson(secretBoxFor(keys), secret, externalAuthSecretColumn.aad({ domain_id: domainId }));
}

/** The plain secret_data of a domain's external auth ({} when none was given). */
export function openExternalAuthSecret(keys: readonly Buffer[], row: { domain_id: string; secret_data: unknown }): Record<string, unknown> {
  const value = openJson(secretBoxFor(keys), row.secret_data ?? {}, externalAuthSecretColumn.aad({ domain_id: row.domain_id }));
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The backfill (`admin secrets seal`, run by every migration): seals again with the current key the
 * secret_data sealed with a previous one (and seals any plain value). Idempotent.
 */
export function sealExternalAuthSecrets(pool: Pool, keys: readonly Buffer[]): Promise<SealReport> {
  return sealColumn(pool, secretBoxFor(keys), externalAuthSecretColumn);
}
