import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import type { CostDataSourcePlugin, CostRecord } from '../plugin/types';
import { createTestCostAnalysis, serveFiles } from '../test-support';

/**
 * Collection through `COPY cost FROM STDIN` (issue #22): values that COPY's text format must escape
 * arrive exactly as the file had them; a value PostgreSQL cannot store fails the task with
 * ERROR_INVALID_COST_DATA at once and nothing is written; rows reach PostgreSQL while the plugin is
 * still producing (the collector never holds a task's rows).
 */
jest.setTimeout(90_000);

/** Values COPY's text format (and CSV) must carry through untouched. */
const TRICKY = [
  'tab\there',
  'line\nbreak',
  'crlf\r\ninside',
  'back\\slash',
  '\\N',
  'NULL',
  '\\.',
  'end\\',
  'a\\tb\\nc',
  'say "hi", then \'bye\'',
  'ünïcødé 日本語 🎉 e\u0301',
  'a,b;c|d',
  '{"json": [1, "x"]}',
];
const q = (v: string) => `"${v.replace(/"/g, '""')}"`;
const record = (i: number, o: Partial<CostRecord> = {}): CostRecord => ({
  cost: (i % 100) + 0.25,
  currency: 'USD',
  usage_quantity: i % 7,
  usage_type: '',
  usage_unit: '',
  provider: 'aws',
  region_code: '',
  product: `p${i % 5}`,
  account: '',
  project_id: '',
  service_account_id: '',
  billed_date: `2024-0${1 + (i % 3)}-1${i % 10}`,
  line: i + 2,
  tags: {},
  additional_info: {},
  ...o,
});

describe('collection through COPY', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  /** Per task_options.mode of the stream test plugin: what getData does. */
  const modes: Record<string, (signal: AbortSignal) => AsyncIterable<{ results: CostRecord[]; errors: [] }>> = {};
  let getDataCalls = 0;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    const plugin: CostDataSourcePlugin = {
      plugin_id: 'plugin-copy-test-cost-datasource',
      name: 'copy test',
      versions: ['1.0.0'],
      required_keys: ['mode'],
      init: () => ({ metadata: {} }),
      async verify() {},
      async getTasks({ options }) {
        return { tasks: [{ task_options: { mode: options.mode } }], changed: [] };
      },
      getData({ task_options, signal }) {
        getDataCalls++;
        return modes[String(task_options.mode)](signal);
      },
    };
    t.deps.plugins.register(plugin);
    t.startWorker();
    files = await serveFiles({});
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const ok = async (path: string, body: object = {}) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** Registers a data source, syncs it, and answers the finished job and its one task. */
  const collect = async (name: string, plugin_id: string, options: object) => {
    const ds = await ok('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id, options }, schedule: { state: 'DISABLED' } });
    const job = await ok('data-source/sync', { data_source_id: ds.data_source_id });
    const done = await waitFor(async () => {
      const j = await ok('job/get', { job_id: job.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 60_000);
    const [task] = (await ok('job-task/list', { job_id: job.job_id })).results;
    const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1`, [ds.data_source_id]);
    return { ds, job: done, task, stored: rows[0].n as number };
  };

  it('carries tabs, line breaks, backslashes, quotes, \\N, NULL and unicode through exactly', async () => {
    const header = 'cost,currency,year,month,day,product,account,usage_type,tags.k,additional_info.note,tags';
    const lines = TRICKY.map((v, i) => [i + 1, 'USD', 2024, 1, 1 + i, q(v), q(`acct ${v}`), q(v), q(v), q(v), q(JSON.stringify({ j: v, [v]: 'key' }))].join(','));
    files.files['/tricky.csv'] = `${header}\r\n${lines.join('\r\n')}\r\n`;
    const { job, task, ds } = await collect('tricky', 'plugin-http-file-cost-datasource', { base_url: files.url('/tricky.csv') });
    expect([job.status, task.created_count]).toEqual(['SUCCESS', TRICKY.length]);
    const { rows } = await t.db.pool.query(
      `SELECT product, account, usage_type, tags, additional_info FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1 ORDER BY cost`,
      [ds.data_source_id],
    );
    expect(rows).toEqual(
      TRICKY.map((v) => ({ product: v, account: `acct ${v}`, usage_type: v, tags: { j: v, [v]: 'key', k: v }, additional_info: { note: v } })),
    );
  });

  it('fails a task whose rows PostgreSQL cannot store (NUL, infinite numbers), naming their lines, writing nothing', async () => {
    const header = 'cost,currency,year,month,day,product,tags.k';
    const body = [
      '1,USD,2024,1,1,fine,x',
      '2,USD,2024,1,2,"nul\0inside",x', // line 3
      '1e999,USD,2024,1,3,big,x', // line 4
      '4,USD,2024,1,4,fine,"tag\0nul"', // line 5
      '5,USD,2024,1,5,fine,x',
    ];
    files.files['/nul.csv'] = `${header}\n${body.join('\n')}\n`;
    const { job, task, stored } = await collect('nul', 'plugin-http-file-cost-datasource', { base_url: files.url('/nul.csv') });
    expect(job).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
    expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA', created_count: 0 });
    expect(task.error_message).toContain('3 row(s)');
    expect(task.error_message).toContain('line 3: a value contains a NUL character');
    expect(task.error_message).toContain('line 4: cost is not a finite number');
    expect(task.error_message).toContain('line 5: a value contains a NUL character');
    expect(stored).toBe(0);
  });

  it('a value PostgreSQL refuses mid-COPY fails the task at once (no retry) and writes nothing', async () => {
    modes.refused = async function* () {
      yield { results: Array.from({ length: 500 }, (_, i) => record(i)), errors: [] };
      yield { results: [record(500, { billed_date: '2024-02-30' })], errors: [] };
    };
    const before = getDataCalls;
    const { job, task, stored } = await collect('refused', 'plugin-copy-test-cost-datasource', { mode: 'refused' });
    expect(job.status).toBe('FAILURE');
    expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA', created_count: 0 });
    // the row and the column, never the value (it came from the source: issue #32)
    expect(task.error_message).toBe('PostgreSQL refused a row of the cost data (SQLSTATE 22008, COPY row 501, column billed_date).');
    expect(getDataCalls - before).toBe(1);
    expect(stored).toBe(0);
  });

  it('streams: rows reach PostgreSQL while the plugin still produces them, 50,000 rows exactly once', async () => {
    const ROWS = 50_000;
    const PAGE = 500;
    let produced = 0;
    let checks = 0;
    /** Rows the COPY into cost has processed so far (another session's view of the running statement). */
    const copied = async () =>
      (await t.db.pool.query(`SELECT coalesce(max(tuples_processed), 0)::int AS n FROM pg_stat_progress_copy WHERE datname = current_database() AND relid = 'cost'::regclass`)).rows[0].n as number;
    modes.stream = async function* () {
      while (produced < ROWS) {
        if (produced && produced % 5_000 === 0) {
          // Every row yielded so far must reach PostgreSQL before this plugin produces more: a collector
          // that held the rows until the end would never get here (the wait fails the task).
          await waitFor(async () => (await copied()) >= produced, 20_000, `PostgreSQL to have ${produced} rows`, 20);
          checks++;
        }
        yield { results: Array.from({ length: PAGE }, (_, k) => record(produced + k)), errors: [] };
        produced += PAGE;
      }
    };
    const { job, task, stored } = await collect('stream', 'plugin-copy-test-cost-datasource', { mode: 'stream' });
    expect(job.status).toBe('SUCCESS');
    expect(checks).toBe(ROWS / 5_000 - 1);
    expect(task.created_count).toBe(ROWS);
    expect(stored).toBe(ROWS);
  });
});
