import type { DirectoryClient } from '@platform/directory';
import type { CostAnalysisConfig } from '../config';
import type { Queryable } from '../db';
import { effectiveRates } from '../exchange-rate/service';
import { COST_WITH_TASK } from '../cost-rows';
import { directoryNames } from './names';

/** Currencies that have a float8 column beside `cost` (analyze sums them as plain columns). */
export const TYPED_CURRENCIES = ['KRW', 'USD', 'JPY'] as const;

/** The day a billed month's costs become confirmed: `aggregationDay` of the following month (UTC). */
export function confirmationDate(month: string, aggregationDay: number): Date {
  const [y, m] = month.split('-').map(Number);
  return new Date(Date.UTC(y, m, aggregationDay));
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** Serializes unified cost rebuilds of one domain (called inside the rebuilding transaction). */
export async function lockDomainUnifiedCosts(db: Queryable, domainId: string) {
  await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`unified-cost:${domainId}`]);
}

/**
 * Rebuilds a domain's unified costs of `months` from its collected cost rows, as upstream's
 * run_unified_cost does: grouped by workspace, project, service account, data source, product,
 * provider, region, usage type/unit and original currency; `cost` converted into every unified
 * currency with the domain's effective exchange rates; names filled. Run it inside a transaction
 * that holds lockDomainUnifiedCosts, so concurrent rebuilds of one domain never interleave.
 */
export async function rebuildUnifiedCosts(
  db: Queryable,
  deps: { config: CostAnalysisConfig; directory: DirectoryClient },
  domainId: string,
  months: string[],
  now = new Date(),
): Promise<number> {
  const list = [...new Set(months)].sort();
  if (!list.length) return 0;
  const { config } = deps;
  const { rates, overridden } = await effectiveRates(db, config, domainId);
  const confirmed = list.map((m) => now >= confirmationDate(m, config.aggregationDay));
  const aggregationDates = list.map((m, i) => (confirmed[i] ? day(confirmationDate(m, config.aggregationDay)) : day(now)));
  const rateCodes = Object.keys(rates);
  const rateValues = rateCodes.map((c) => rates[c]);
  const targets = config.unifiedCurrencies;

  const values: unknown[] = [domainId, list, confirmed, aggregationDates, rateCodes, rateValues, day(now), overridden ? `${config.exchange.source} (domain rates)` : config.exchange.source, now];
  const p = (v: unknown) => `$${values.push(v)}`;
  // The cost rows were usually written by this very transaction, so the planner has no statistics for
  // them and would sort millions of rows on twelve text keys: hash them instead, with room to do so.
  // Nor would it know how many rows a task holds: it may join job_task by re-reading the months' cost
  // rows once per task (a nested loop); a hash join reads them once. A path switched off is costed
  // 10^10, which would have the statement JIT-compiled with every optimization (seconds of CPU,
  // measured: 3.0 s against 1.6 s without): no JIT for it.
  await db.query(`SET LOCAL enable_sort = off`);
  await db.query(`SET LOCAL enable_nestloop = off`);
  await db.query(`SET LOCAL jit = off`);
  await db.query(`SET LOCAL work_mem = '256MB'`);
  const names = await directoryNames(db, deps.directory, domainId, list);
  const amount = (cur: string) => `(g.amount * ${p(rates[cur])}::float8 / r.rate)`;
  const costJson = `jsonb_build_object(${targets.map((c) => `${p(c)}::text, ${amount(c)}`).join(', ')})`;
  const typed = TYPED_CURRENCIES.map((c) => (targets.includes(c) ? amount(c) : 'NULL::float8'));

  await db.query(`DELETE FROM unified_cost WHERE domain_id = $1 AND billed_month = ANY($2::text[])`, [domainId, list]);
  // unified_cost_id: `uc-` and 12 hex digits, as before: a random 48-bit start per rebuild (random():
  // PostgreSQL 15's xoshiro, seeded per session from the strong source), then consecutive. Ids that
  // follow each other land on the same B-tree leaf pages of the primary key; a random id per row
  // dirtied a leaf page per row and, after each checkpoint, wrote it whole into the WAL (4.4x the WAL
  // of consecutive ids, issue #31). Ids are references, not secrets.
  const inserted = await db.query(
    `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id,
       provider, region_code, region_key, product, usage_type, usage_unit, usage_quantity, billed_year, billed_month, aggregation_date,
       exchange_date, exchange_source, currency, is_confirmed, cost, cost_krw, cost_usd, cost_jpy,
       service_account_name, data_source_name, project_name, workspace_name, created_at)
     SELECT $1, 'uc-' || lpad(to_hex((b.start + row_number() OVER ()) % 281474976710656), 12, '0'), g.workspace_id, g.project_id,
       g.service_account_id, g.data_source_id, g.provider, g.region_code, g.region_key, g.product, g.usage_type,
       g.usage_unit, COALESCE(g.quantity, 0), substr(g.billed_month, 1, 4), g.billed_month, mo.aggregation_date, $7, $8, g.currency,
       mo.confirmed, ${costJson}, ${typed.join(', ')}, '', COALESCE(ds.name, g.data_source_id),
       COALESCE(${p(names.projects)}::jsonb ->> g.project_id, g.project_id), COALESCE(${p(names.workspaces)}::jsonb ->> g.workspace_id, g.workspace_id), $9
     FROM (SELECT floor(random() * 281474976710656)::bigint AS start) AS b, (
       SELECT c.workspace_id, c.project_id, c.service_account_id, t.data_source_id, c.provider, c.region_code, c.region_key, c.product,
              c.usage_type, c.usage_unit, c.billed_month, c.currency, sum(c.cost) AS amount, sum(c.usage_quantity) AS quantity
       FROM ${COST_WITH_TASK} WHERE t.domain_id = $1 AND c.billed_month = ANY($2::text[])
       GROUP BY c.workspace_id, c.project_id, c.service_account_id, t.data_source_id, c.provider, c.region_code, c.region_key,
                c.product, c.usage_type, c.usage_unit, c.billed_month, c.currency
     ) AS g
     JOIN unnest($2::text[], $3::bool[], $4::text[]) AS mo(month, confirmed, aggregation_date) ON mo.month = g.billed_month
     LEFT JOIN unnest($5::text[], $6::float8[]) AS r(currency, rate) ON r.currency = g.currency
     LEFT JOIN data_source ds ON ds.domain_id = $1 AND ds.data_source_id = g.data_source_id`,
    values,
  );

  return inserted.rowCount ?? 0;
}

/** Months whose confirmation day has passed but whose unified costs were built before it: rebuild them. */
export async function monthsToConfirm(db: Queryable, aggregationDay: number, now = new Date()) {
  const { rows } = await db.query<{ domain_id: string; billed_month: string }>(
    `SELECT DISTINCT domain_id, billed_month FROM unified_cost WHERE NOT is_confirmed`,
  );
  return rows.filter((r) => now >= confirmationDate(r.billed_month, aggregationDay));
}
