import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { ensureMonthPartitions, maintainPartitions, monthOf, monthsWithPartition } from './partitions';

jest.setTimeout(120_000);

const root = path.resolve(__dirname, '../../..');
const migrationsDir = path.resolve(__dirname, '../prisma/migrations');
const migrations = readdirSync(migrationsDir).filter((d) => /^\d{14}_/.test(d)).sort();
const PARTITIONING = '20261126060434_partition_by_month';
const sql = (m: string) => readFileSync(path.join(migrationsDir, m, 'migration.sql'), 'utf8');

/** A cost row as the tables before 20261127002128_cost_task_no held it (four text ids of its task). */
const oldCostRow = (month: string, n: number) =>
  `('d1', 'ds-1', 'job-1', 'task-1', 'ws-1', 'p-${n}', '', 'acct', 'aws', 'r', 'aws.r', 'product', 'type', 'Hrs', 'USD', ${n}, 1, '${month}-15', '${month}', '{}', '{}')`;
/** Its task, which the later migration numbers. */
const OLD_TASK = `INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id) VALUES ('d1', 'task-1', 'ws-1', 'WORKSPACE', 'job-1', 'ds-1')`;
/** A cost row of today's schema (task 1). */
const costRow = (month: string, n: number) =>
  `(1, '${month}-15', ${n}, 1, '${month}', 'ws-1', 'p-${n}', '', 'acct', 'aws', 'r', 'aws.r', 'product', 'type', 'Hrs', 'USD', '{}', '{}')`;
const unifiedRow = (month: string, n: number) =>
  `('d1', 'uc-${month}-${n}', 'ws-1', 'p-${n}', '', 'ds-1', 'aws', 'r', 'aws.r', 'product', 'type', 'Hrs', 1, '${month.slice(0, 4)}', '${month}', '', '', 'MANUAL', 'USD', true, '{"USD": ${n}}', NULL, ${n}, NULL, '', 'ds', 'p', 'ws', now())`;

async function partitionsOf(db: TempDatabase, table: string) {
  const { rows } = await db.pool.query(`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM ${table} GROUP BY 1 ORDER BY 1`);
  return Object.fromEntries(rows.map((r) => [r.part, r.n]));
}

describe('partitioning cost and unified_cost by month', () => {
  const dbs: TempDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('the migration converts existing rows into month partitions, in one transaction', async () => {
    const db = await createTempDatabase({ prefix: 'partition_migration' });
    dbs.push(db);
    for (const m of migrations.slice(0, migrations.indexOf(PARTITIONING))) await db.pool.query(sql(m));
    await db.pool.query(`INSERT INTO cost VALUES ${[oldCostRow('2019-05', 1), oldCostRow('2024-01', 2), oldCostRow('2024-01', 3), oldCostRow('2024-02', 4)].join(', ')}`);
    await db.pool.query(
      `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id, provider, region_code, region_key,
         product, usage_type, usage_unit, usage_quantity, billed_year, billed_month, aggregation_date, exchange_date, exchange_source, currency, is_confirmed,
         cost, cost_krw, cost_usd, cost_jpy, service_account_name, data_source_name, project_name, workspace_name, created_at)
       VALUES ${[unifiedRow('2019-05', 1), unifiedRow('2024-01', 2), unifiedRow('2024-02', 3)].join(', ')}`,
    );

    // A failure half-way leaves everything as it was: a row of a month that is no month makes the
    // migration's function refuse it after the cost table was already converted.
    await db.pool.query(`INSERT INTO cost VALUES ${oldCostRow('2024-13', 9).replace("'2024-13-15'", "'2024-12-15'")}`);
    await expect(db.pool.query(sql(PARTITIONING))).rejects.toThrow(/not a month/);
    await db.pool.query('ROLLBACK').catch(() => {});
    const kept = await db.pool.query(`SELECT relkind FROM pg_class WHERE relname IN ('cost', 'unified_cost') ORDER BY relname`);
    expect(kept.rows.map((r) => r.relkind)).toEqual(['r', 'r']);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM cost`)).rows[0].n).toBe(5);
    await db.pool.query(`DELETE FROM cost WHERE billed_month = '2024-13'`);

    await db.pool.query(sql(PARTITIONING));
    const kinds = await db.pool.query(`SELECT relname, relkind FROM pg_class WHERE relname IN ('cost', 'unified_cost', 'cost_default', 'unified_cost_default') ORDER BY relname`);
    expect(kinds.rows).toEqual([
      { relname: 'cost', relkind: 'p' },
      { relname: 'cost_default', relkind: 'r' },
      { relname: 'unified_cost', relkind: 'p' },
      { relname: 'unified_cost_default', relkind: 'r' },
    ]);
    expect(await partitionsOf(db, 'cost')).toEqual({ cost_p201905: 1, cost_p202401: 2, cost_p202402: 1 });
    expect(await partitionsOf(db, 'unified_cost')).toEqual({ unified_cost_p201905: 1, unified_cost_p202401: 1, unified_cost_p202402: 1 });
    // Made ahead: last month to 12 months ahead.
    const now = new Date();
    for (const m of [monthOf(now, -1), monthOf(now), monthOf(now, 12)]) {
      expect((await db.pool.query(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`unified_cost_p${m.replace('-', '')}`])).rows[0].ok).toBe(true);
    }
    // The primary key holds the partition key; it still refuses a duplicate within a month.
    const pk = await db.pool.query(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = 'unified_cost'::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
    );
    expect(pk.rows.map((r) => r.attname)).toEqual(['domain_id', 'unified_cost_id', 'billed_month']);
    await expect(db.pool.query(`INSERT INTO unified_cost SELECT * FROM unified_cost WHERE billed_month = '2024-01'`)).rejects.toMatchObject({ code: '23505' });
    // A query over one month reads one partition.
    const plan = (await db.pool.query(`EXPLAIN SELECT sum(cost_usd) FROM unified_cost WHERE domain_id = 'd1' AND billed_month >= '2024-01' AND billed_month < '2024-02'`)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain('unified_cost_p202401');
    expect(plan).not.toMatch(/unified_cost_p(2019|202402)|unified_cost_default/);
  });

  it('an existing database upgraded by the migration tool (as the k8s Job runs it) keeps every row', async () => {
    const db = await createTempDatabase({ prefix: 'partition_upgrade' });
    dbs.push(db);
    // The database as the previous release left it: the migrations before this one, applied by the tool.
    const old = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    for (const m of migrations.slice(0, migrations.indexOf(PARTITIONING))) cpSync(path.join(migrationsDir, m), path.join(old, m), { recursive: true });
    cpSync(path.join(migrationsDir, 'migration_lock.toml'), path.join(old, 'migration_lock.toml'));
    const script = `import { applyMigrations } from ${JSON.stringify(path.join(root, 'tools/prisma/engine.mjs'))};
      await applyMigrations({ schemaPath: ${JSON.stringify(path.join(root, 'apps/cost-analysis/prisma/schema.prisma'))}, migrationsDir: ${JSON.stringify(old)}, databaseUrl: ${JSON.stringify(db.url)} });`;
    const before = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(before.stderr).toBe('');
    rmSync(old, { recursive: true, force: true });
    await db.pool.query(`INSERT INTO cost VALUES ${[oldCostRow('2022-11', 1), oldCostRow('2023-01', 2)].join(', ')}`);
    await db.pool.query(OLD_TASK);

    const run = spawnSync(process.execPath, [path.join(root, 'tools/prisma/migrate.mjs'), '--app', 'cost-analysis', '--database-url', db.url], { cwd: root, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(PARTITIONING);
    expect(await partitionsOf(db, 'cost')).toEqual({ cost_p202211: 1, cost_p202301: 1 });
    const recorded = await db.pool.query(`SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND migration_name = $1`, [PARTITIONING]);
    expect(recorded.rowCount).toBe(1);
  });

  it('makes a month partition once, however many ask; never over rows already in the default partition', async () => {
    const db = await createTempDatabase({ app: 'cost-analysis' });
    dbs.push(db);
    const made = await Promise.all([ensureMonthPartitions(db.pool, ['2031-07']), ensureMonthPartitions(db.pool, ['2031-07']), ensureMonthPartitions(db.pool, ['2031-07'])]);
    expect(made.flat().sort()).toEqual(['cost:2031-07', 'unified_cost:2031-07']);
    expect(await ensureMonthPartitions(db.pool, ['2031-07'])).toEqual([]);
    await db.pool.query(`INSERT INTO cost VALUES ${[costRow('2031-07', 1), costRow('2031-07', 2)].join(', ')}`);
    expect(await partitionsOf(db, 'cost')).toEqual({ cost_p203107: 2 });

    // Rows of a month with no partition sit in the default partition; they are not moved (a reader
    // planned before a move would see them nowhere), and the sweep reports them.
    await db.pool.query(`INSERT INTO cost VALUES ${costRow('2032-03', 3)}`);
    expect(await ensureMonthPartitions(db.pool, ['2032-03'])).toEqual(['unified_cost:2032-03']);
    expect(await partitionsOf(db, 'cost')).toEqual({ cost_default: 1, cost_p203107: 2 });
    const sweep = await maintainPartitions(db.pool);
    expect(sweep.inDefault).toBe(1);
    expect(sweep.created).toEqual([]); // the migration made the months ahead already
    expect([...(await monthsWithPartition(db.pool, ['2031-07', '2032-03', monthOf(new Date(), 2)]))].sort()).toEqual(['2031-07', monthOf(new Date(), 2)].sort());
    await expect(db.pool.query(`SELECT ensure_month_partition('job', '2031-07')`)).rejects.toThrow(/no month partitions/);
    await expect(db.pool.query(`SELECT ensure_month_partition('cost', '2031-13')`)).rejects.toThrow(/not a month/);
  });

  it('makes all the partitions of one call in one transaction: one it cannot have in time fails the call, none is made', async () => {
    const db = await createTempDatabase({ app: 'cost-analysis' });
    dbs.push(db);
    // Attaching a partition locks the default partition exclusively: a reader of unified_cost's holds it up.
    const reader = await db.pool.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('LOCK TABLE unified_cost_default IN ACCESS SHARE MODE');
      await expect(ensureMonthPartitions(db.pool, ['2033-01', '2033-02'])).rejects.toThrow(/lock timeout/);
      await reader.query('ROLLBACK');
    } finally {
      reader.release();
    }
    // cost's partitions, made before unified_cost's in the same transaction, went with it.
    expect(await monthsWithPartition(db.pool, ['2033-01', '2033-02'])).toEqual(new Set());
    expect(await ensureMonthPartitions(db.pool, ['2033-02', '2033-01'])).toEqual(['cost:2033-01', 'cost:2033-02', 'unified_cost:2033-01', 'unified_cost:2033-02']);
  });
});
