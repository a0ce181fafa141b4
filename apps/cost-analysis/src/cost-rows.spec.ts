import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { deleteDataSourceCosts, deleteJobCosts, succeededTaskNumbers } from './cost-rows';
import { Collector } from './collector/collector';
import { createTestCostAnalysis } from './test-support';

jest.setTimeout(120_000);

const migrationsDir = path.resolve(__dirname, '../prisma/migrations');
const migrations = readdirSync(migrationsDir).filter((d) => /^\d{14}_/.test(d)).sort();
const TASK_NO = '20261127002128_cost_task_no';
const sql = (m: string) => readFileSync(path.join(migrationsDir, m, 'migration.sql'), 'utf8');

/** The tasks of the old rows: (domain, task, job, data source). */
const TASKS = [
  ['d1', 'task-a', 'job-1', 'ds-1'],
  ['d1', 'task-b', 'job-1', 'ds-1'],
  ['d1', 'task-c', 'job-2', 'ds-2'],
  ['d2', 'task-a', 'job-9', 'ds-1'], // the same task id in another domain
];
/** A cost row as the table before the migration held it: the four text ids of its task first. */
const oldRow = (task: string[], month: string, n: number, tags = '{}') =>
  `('${task[0]}', '${task[3]}', '${task[2]}', '${task[1]}', 'ws-${n}', 'p-${n}', 'sa-${n}', 'acct-${n}', 'aws', 'r${n}', 'aws.r${n}', 'prod-${n}', 'type-${n}', 'Hrs', 'USD', ${n}.25, ${n}, '${month}-0${(n % 9) + 1}', '${month}', '${tags}', '{"n": ${n}}')`;

const VALUES = ['workspace_id', 'project_id', 'service_account_id', 'account', 'provider', 'region_code', 'region_key', 'product', 'usage_type', 'usage_unit',
  'currency', 'cost', 'usage_quantity', 'billed_date::text', 'billed_month', 'tags', 'additional_info'];

async function atPreviousMigration(prefix: string) {
  const db = await createTempDatabase({ prefix });
  for (const m of migrations.slice(0, migrations.indexOf(TASK_NO))) await db.pool.query(sql(m));
  for (const t of TASKS) {
    await db.pool.query(`INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id) VALUES ($1, $2, 'ws-1', 'WORKSPACE', $3, $4)`, t);
  }
  const rows = [
    oldRow(TASKS[0], '2024-01', 1, '{"env": "prod"}'),
    oldRow(TASKS[0], '2024-02', 2),
    oldRow(TASKS[1], '2024-01', 3),
    oldRow(TASKS[2], '2024-01', 4),
    oldRow(TASKS[3], '2024-01', 5),
    oldRow(TASKS[3], '2040-06', 6), // a month without a partition: in cost_default until the migration
  ];
  await db.pool.query(`INSERT INTO cost VALUES ${rows.join(', ')}`);
  return db;
}

describe('a narrower cost row: cost.task_no names the job task', () => {
  const dbs: TempDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('the migration keeps every row with its task, as task_no, in month partitions', async () => {
    const db = await atPreviousMigration('cost_task_no');
    dbs.push(db);
    const before = await db.pool.query(`SELECT domain_id, data_source_id, job_id, job_task_id, ${VALUES.join(', ')} FROM cost ORDER BY cost`);
    await db.pool.query(sql(TASK_NO));

    const columns = await db.pool.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'cost' AND table_schema = 'public' ORDER BY ordinal_position`);
    expect(columns.rows.map((r) => r.column_name)).toEqual([
      'task_no', 'billed_date', 'cost', 'usage_quantity', 'billed_month', 'workspace_id', 'project_id', 'service_account_id', 'account',
      'provider', 'region_code', 'region_key', 'product', 'usage_type', 'usage_unit', 'currency', 'tags', 'additional_info',
    ]);
    const after = await db.pool.query(
      `SELECT t.domain_id, t.data_source_id, t.job_id, t.job_task_id, ${VALUES.map((v) => `c.${v}`).join(', ')} FROM cost c JOIN job_task t ON t.task_no = c.task_no ORDER BY c.cost`,
    );
    expect(after.rows).toEqual(before.rows);
    expect(after.rows).toHaveLength(6);
    const numbers = await db.pool.query(`SELECT count(DISTINCT task_no)::int AS n FROM job_task`);
    expect(numbers.rows[0].n).toBe(TASKS.length);

    const parts = await db.pool.query(`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM cost GROUP BY 1 ORDER BY 1`);
    // Every month holding rows has its partition, as after the partitioning migration.
    expect(parts.rows).toEqual([
      { part: 'cost_p202401', n: 4 },
      { part: 'cost_p202402', n: 1 },
      { part: 'cost_p204006', n: 1 },
    ]);
    const leftovers = await db.pool.query(`SELECT relname FROM pg_class WHERE relname LIKE 'cost_before_task_no%'`);
    expect(leftovers.rows).toEqual([]);
    const index = await db.pool.query(`SELECT indexdef FROM pg_indexes WHERE tablename = 'cost'`);
    expect(index.rows.map((r) => r.indexdef)).toEqual([expect.stringMatching(/USING brin \(task_no\) WITH \(pages_per_range='32', autosummarize='on'\)/)]);

    // New tasks number on from the existing ones.
    const next = await db.pool.query(
      `INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id) VALUES ('d1', 'task-new', 'ws-1', 'WORKSPACE', 'job-3', 'ds-1') RETURNING task_no`,
    );
    expect(next.rows[0].task_no).toBe(TASKS.length + 1);
  });

  it('a cost row without its task stops the migration, which leaves everything as it was', async () => {
    const db = await atPreviousMigration('cost_task_no_orphan');
    dbs.push(db);
    await db.pool.query(`INSERT INTO cost VALUES ${oldRow(['d1', 'task-gone', 'job-1', 'ds-1'], '2024-01', 7)}`);
    await expect(db.pool.query(sql(TASK_NO))).rejects.toThrow(/without their job task/);
    await db.pool.query('ROLLBACK').catch(() => {});
    const kept = await db.pool.query(`SELECT count(*)::int AS n, count(DISTINCT job_task_id)::int AS tasks FROM cost`);
    expect(kept.rows[0]).toEqual({ n: 7, tasks: 4 });
    const col = await db.pool.query(`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'job_task' AND column_name = 'task_no'`);
    expect(col.rows[0].n).toBe(0);
  });

  it('deletes a job’s, a data source’s rows by their tasks’ numbers, and nobody else’s', async () => {
    const db = await atPreviousMigration('cost_task_no_deletes');
    dbs.push(db);
    await db.pool.query(sql(TASK_NO));
    const left = async () => (await db.pool.query(`SELECT array_agg(cost ORDER BY cost)::float8[] AS c FROM cost`)).rows[0].c;

    await deleteJobCosts(db.pool, 'd1', 'job-2');
    expect(await left()).toEqual([1.25, 2.25, 3.25, 5.25, 6.25]);
    // d2's task-a has the same ids but for its domain: its rows stay.
    expect(await deleteDataSourceCosts(db.pool, 'd1', 'ds-1')).toEqual(expect.arrayContaining(['2024-01', '2024-02']));
    expect(await left()).toEqual([5.25, 6.25]);
    expect((await deleteDataSourceCosts(db.pool, 'd2', 'ds-1')).sort()).toEqual(['2024-01', '2040-06']);
    expect(await left()).toBeNull();

    await db.pool.query(`INSERT INTO job (domain_id, job_id, workspace_id, resource_group, data_source_id, status) VALUES ('d1', 'job-1', 'ws-1', 'WORKSPACE', 'ds-1', 'SUCCESS'), ('d1', 'job-2', 'ws-1', 'WORKSPACE', 'ds-2', 'SUCCESS'), ('d2', 'job-9', 'ws-1', 'WORKSPACE', 'ds-1', 'FAILURE')`);
    const numbers = (await db.pool.query(`SELECT job_task_id, task_no FROM job_task WHERE domain_id = 'd1' ORDER BY 1`)).rows;
    const byNumber = (a: number, b: number) => a - b;
    expect((await succeededTaskNumbers(db.pool, 'd1', 'ds-1')).sort(byNumber)).toEqual(numbers.filter((r) => r.job_task_id !== 'task-c').map((r) => r.task_no).sort(byNumber));
    expect(await succeededTaskNumbers(db.pool, 'd2', 'ds-1')).toEqual([]);
  });

  describe('through the collector', () => {
    let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
    beforeAll(async () => {
      t = await createTestCostAnalysis();
      await t.db.pool.query(
        `INSERT INTO data_source (domain_id, data_source_id, name, workspace_id, resource_group, plugin_info, secret_data) VALUES ('d1', 'ds-1', 'one', '*', 'DOMAIN', '{}', '{}')`,
      );
    });
    afterAll(async () => t?.close());

    /** A job of ds-1 with one task and its cost rows (provider, billed_date, cost); answers the task's number. */
    async function job(jobId: string, status: string, rows: [string, string, number][], extra = '') {
      await t.db.pool.query(
        `INSERT INTO job (domain_id, job_id, workspace_id, resource_group, data_source_id, status, remained_tasks, total_tasks${extra ? ', created_at' : ''})
         VALUES ('d1', $1, '*', 'DOMAIN', 'ds-1', $2, 0, 1${extra ? `, ${extra}` : ''})`,
        [jobId, status],
      );
      const { rows: [task] } = await t.db.pool.query(
        `INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id, status) VALUES ('d1', $1, '*', 'DOMAIN', $2, 'ds-1', 'SUCCESS') RETURNING task_no`,
        [`${jobId}-task`, jobId],
      );
      for (const [provider, date, cost] of rows) {
        await t.db.pool.query(
          `INSERT INTO cost VALUES ($1, $2::date, $3, 1, substr($2::text, 1, 7), '*', '', '', 'acct', $4, 'r', '', 'prod', 'type', 'Hrs', 'USD', '{}', '{}')`,
          [task.task_no, date, cost, provider],
        );
      }
      return task.task_no as number;
    }
    const costs = async () => (await t.db.pool.query(`SELECT t.job_id, c.cost FROM cost c JOIN job_task t ON t.task_no = c.task_no ORDER BY c.cost`)).rows;

    it('a job past its timeout: the sweep makes it TIMEOUT and removes its rows, no other job’s', async () => {
      await job('job-ok', 'SUCCESS', [['aws', '2024-01-05', 1]]);
      await job('job-late', 'IN_PROGRESS', [['aws', '2024-01-06', 2], ['aws', '2024-02-06', 3]], `now() - interval '2 days'`);
      const swept = await new Collector(t.deps).sweep();
      expect(swept.timedOut).toBe(1);
      expect(await costs()).toEqual([{ job_id: 'job-ok', cost: 1 }]);
      await t.db.pool.query(`DELETE FROM cost`);
    });

    it('a job’s close replaces earlier rows in the range its plugin declared changed, with its filter', async () => {
      await job('job-1', 'SUCCESS', [['aws', '2024-03-09', 10], ['aws', '2024-03-10', 11], ['gcp', '2024-03-12', 12], ['aws', '2024-03-21', 13]]);
      const own = await job('job-2', 'IN_PROGRESS', [['aws', '2024-03-15', 20]]);
      const changed = [{ start: '2024-03-10', end: '2024-03-20', filter: { provider: 'aws' } }];
      const client = await t.db.pool.connect();
      try {
        await client.query('BEGIN');
        await (new Collector(t.deps) as any).closeJob(client, { domain_id: 'd1', job_id: 'job-2', data_source_id: 'ds-1', changed });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      // 11 (aws, in the range) goes; 10 and 13 (outside it) and 12 (gcp) stay; job-2's own row stays.
      expect(await costs()).toEqual([
        { job_id: 'job-1', cost: 10 },
        { job_id: 'job-1', cost: 12 },
        { job_id: 'job-1', cost: 13 },
        { job_id: 'job-2', cost: 20 },
      ]);
      expect(own).toBeGreaterThan(0);
      const unified = await t.db.pool.query(`SELECT sum(cost_usd)::float8 AS usd, min(data_source_name) AS ds FROM unified_cost WHERE billed_month = '2024-03'`);
      expect(unified.rows[0]).toEqual({ usd: 10 + 12 + 13 + 20, ds: 'one' });
    });
  });
});
