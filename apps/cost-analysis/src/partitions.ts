import { withTransaction } from '@platform/db';
import type { Pool } from 'pg';

/**
 * cost and unified_cost are partitioned by billed_month, one partition per month plus a default one
 * (migration 20261126060434_partition_by_month, docs/decisions/database.md "Partitions"). Partitions are
 * made ahead (the migration: every month holding rows, and last month to 12 months ahead; the worker's
 * sweep: last month to MONTHS_AHEAD ahead) and on demand: the collector makes the partition of a month
 * it meets before it writes the month's first row (between two COPY statements: a COPY routes rows
 * with the partitions it saw when it started). Both run the database function `ensure_month_partition`
 * (an advisory lock per table) under a lock timeout: a busy table never holds collection up, the rows
 * then go to the default partition, which is correct, only not pruned.
 *
 * Rows already in the default partition are never moved by the app: a query planned before such a move
 * and run after it sees the rows in neither partition (seen on PostgreSQL 15). The sweep reports them.
 */
export const PARTITIONED_TABLES = ['cost', 'unified_cost'] as const;
export const MONTHS_AHEAD = 3;
const LOCK_TIMEOUT_MS = 5_000;

/** 'YYYY-MM' of `d` moved by `delta` months (UTC). */
export function monthOf(d: Date, delta = 0): string {
  const x = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + delta, 1));
  return x.toISOString().slice(0, 7);
}

/**
 * Creates the missing month partitions of both tables for `months`; answers the ones it created (`table:month`).
 * All in one statement and one transaction (cost's before unified_cost's, months in order, so that two
 * callers take the tables' locks in the same order): a transaction per partition spent most of its time
 * committing (48 partitions, psql: 0.28-0.81 s one transaction each, 0.16-0.27 s in one; issue #31). A
 * failure (a lock not had within LOCK_TIMEOUT_MS) creates none of them; the caller writes to the
 * default partition then, and the sweep tries again.
 */
export async function ensureMonthPartitions(pool: Pool, months: Iterable<string>): Promise<string[]> {
  const list = [...new Set(months)].filter((m) => /^\d{4}-(0[1-9]|1[0-2])$/.test(m)).sort();
  if (!list.length) return [];
  const { rows: existing } = await pool.query<{ name: string }>(`SELECT relname AS name FROM pg_class WHERE relname = ANY($1::text[])`, [
    PARTITIONED_TABLES.flatMap((t) => list.map((m) => `${t}_p${m.replace('-', '')}`)),
  ]);
  const have = new Set(existing.map((r) => r.name));
  const missing = PARTITIONED_TABLES.flatMap((table) => list.filter((m) => !have.has(`${table}_p${m.replace('-', '')}`)).map((month) => ({ table, month })));
  if (!missing.length) return [];
  return withTransaction(pool, async (client) => {
    await client.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
    const { rows } = await client.query<{ made: boolean }>(
      `SELECT ensure_month_partition(p.tbl, p.month) AS made FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(tbl, month, n) ORDER BY p.n`,
      [missing.map((x) => x.table), missing.map((x) => x.month)],
    );
    return missing.filter((_, i) => rows[i].made).map((x) => `${x.table}:${x.month}`);
  });
}

/** The months the sweep keeps ready: last month to MONTHS_AHEAD ahead. */
export function monthsAhead(now = new Date()): string[] {
  return Array.from({ length: MONTHS_AHEAD + 2 }, (_, i) => monthOf(now, i - 1));
}

/**
 * The sweep's part (every minute in the worker): the months ahead. Answers what it created and how
 * many rows sit in the default partitions (to report).
 */
export async function maintainPartitions(pool: Pool, now = new Date()): Promise<{ created: string[]; inDefault: number }> {
  const created = await ensureMonthPartitions(pool, monthsAhead(now));
  const { rows } = await pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM (SELECT 1 FROM cost_default LIMIT 1000) c)::int + (SELECT count(*) FROM (SELECT 1 FROM unified_cost_default LIMIT 1000) u)::int AS n`,
  );
  return { created, inDefault: rows[0].n };
}

/** Which of `months` have a partition of `cost` (the collector's check before it writes a month). */
export async function monthsWithPartition(pool: Pool, months: Iterable<string>): Promise<Set<string>> {
  const list = [...new Set(months)];
  const { rows } = await pool.query<{ name: string }>(`SELECT relname AS name FROM pg_class WHERE relname = ANY($1::text[])`, [list.map((m) => `cost_p${m.replace('-', '')}`)]);
  const have = new Set(rows.map((r) => r.name));
  return new Set(list.filter((m) => have.has(`cost_p${m.replace('-', '')}`)));
}
