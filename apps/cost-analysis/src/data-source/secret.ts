import type { Pool } from 'pg';
import { openJson, sealColumn, sealJson, secretAad, secretBoxFor, type SealedColumn, type SealedJson, type SealReport } from '@platform/secrets';

/**
 * A data source's secret_data at rest: sealed with libs/secrets (AES-256-GCM), bound to its domain and
 * data source id, so it opens only in its own row. Opened only to hand it to the plugin (verify,
 * get_tasks, get_data); never answered by the API.
 */
export const dataSourceSecretColumn: SealedColumn = {
  table: 'data_source',
  key: ['domain_id', 'data_source_id'],
  column: 'secret_data',
  form: 'json',
  aad: (r) => secretAad('cost-analysis:data_source.secret_data', r.domain_id, r.data_source_id),
};

type Json = Record<string, unknown>;

export function sealDataSourceSecret(keys: readonly Buffer[], domainId: string, dataSourceId: string, secret: Json): SealedJson {
  return sealJson(secretBoxFor(keys), secret, dataSourceSecretColumn.aad({ domain_id: domainId, data_source_id: dataSourceId }));
}

/** The plain secret_data of a data source row (a row from before sealing is read as it is). */
export function openDataSourceSecret(keys: readonly Buffer[], ds: { domain_id: string; data_source_id: string; secret_data?: unknown }): Json {
  const aad = dataSourceSecretColumn.aad({ domain_id: ds.domain_id, data_source_id: ds.data_source_id });
  const value = openJson(secretBoxFor(keys), ds.secret_data ?? {}, aad);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

/**
 * The backfill (`admin.js secrets seal`): seals every secret_data still stored in plain text, and seals
 * again with the current key those sealed with a previous one. Idempotent.
 */
export function sealDataSourceSecrets(pool: Pool, keys: readonly Buffer[]): Promise<SealReport> {
  return sealColumn(pool, secretBoxFor(keys), dataSourceSecretColumn);
}
