import type { Pool } from 'pg';
import { withTransaction } from '@platform/db';
import { isApiError } from '@platform/errors';
import type { SecretBox } from './secret-box';
import { isSealedJson, isSealedText, openJson, openText, sealedJsonSql, sealedTextSql, sealJson, sealText } from './stored';

/** A column holding secrets, named by the app (constants, never input). */
export interface SealedColumn {
  table: string;
  /** The primary key's columns: the backfill walks the table in this order. */
  key: readonly string[];
  column: string;
  form: 'json' | 'text';
  /** The AAD of a row's secret, from its key columns. */
  aad: (row: Record<string, string>) => string;
}

export interface SealReport {
  /** Plain values (written before the app sealed them) now sealed. */
  sealed: number;
  /** Values sealed with a previous key, now sealed with the current one. */
  resealed: number;
  /** Sealed values that do not open (a key no longer configured, or altered): left as they are. */
  unreadable: number;
}

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL identifier: ${name}`);
  return `"${name}"`;
};

/**
 * The backfill: after it, every value of the column is sealed with the current key. Plain values (rows
 * written before the app sealed them) are sealed; values sealed with a previous key are sealed again
 * with the current one, so the previous key can be retired. Idempotent, and safe while the app serves
 * and in several processes at once: each batch locks its rows (`FOR UPDATE`), so a concurrent write
 * waits and is never overwritten with a stale value. Empty text stays empty (it means "no secret").
 * A value that does not open is counted and left alone, never a reason to stop.
 */
export async function sealColumn(pool: Pool, box: SecretBox, c: SealedColumn, batchSize = 500): Promise<SealReport> {
  const keys = c.key.map(ident);
  const col = ident(c.column);
  const json = c.form === 'json';
  // Rows to change: plain, or sealed with a key other than the current one ($2).
  const todo = json
    ? `${col} IS NOT NULL AND (NOT ${sealedJsonSql(col)} OR ${col} ->> 'key_id' IS DISTINCT FROM $2)`
    : `${col} IS NOT NULL AND ${col} <> '' AND (NOT ${sealedTextSql(col)} OR split_part(${col}, ':', 3) <> $2)`;
  const after = `(${keys.join(', ')}) > (${keys.map((_, i) => `$${i + 3}`).join(', ')})`;
  const report: SealReport = { sealed: 0, resealed: 0, unreadable: 0 };
  let cursor: string[] | undefined;
  for (;;) {
    const batch = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<Record<string, unknown>>(
        `SELECT ${keys.join(', ')}, ${col} AS value FROM ${ident(c.table)}
         WHERE ${todo}${cursor ? ` AND ${after}` : ''} ORDER BY ${keys.join(', ')} LIMIT $1 FOR UPDATE`,
        [batchSize, box.currentKeyId, ...(cursor ?? [])],
      );
      for (const row of rows) {
        const key = Object.fromEntries(c.key.map((k) => [k, String(row[k])]));
        const aad = c.aad(key);
        const wasSealed = json ? isSealedJson(row.value) : isSealedText(row.value);
        let value: string;
        try {
          value = json ? JSON.stringify(sealJson(box, openJson(box, row.value, aad), aad)) : sealText(box, openText(box, String(row.value), aad), aad);
        } catch (e) {
          if (!isApiError(e)) throw e;
          report.unreadable++;
          continue;
        }
        await client.query(`UPDATE ${ident(c.table)} SET ${col} = $1${json ? '::jsonb' : ''} WHERE ${keys.map((k, i) => `${k} = $${i + 2}`).join(' AND ')}`, [
          value,
          ...c.key.map((k) => key[k]),
        ]);
        report[wasSealed ? 'resealed' : 'sealed']++;
      }
      return rows;
    });
    if (batch.length < batchSize) return report;
    const last = batch[batch.length - 1];
    cursor = c.key.map((k) => String(last[k]));
  }
}
