import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { Collector } from './collector/collector';
import { createTestCostAnalysis, serveFiles } from './test-support';
import { directoryNames, WHOLE_DIRECTORY_NAMES_MAX } from './unified-cost/names';
import { OUTBOUND_REFUSED_MESSAGE } from '@platform/net';

/**
 * Collection end to end: a multi-month, multi-currency CSV served over loopback HTTP, collected by the
 * real app and worker, and unified costs, job tasks, analyze and stat checked against numbers computed
 * here from the fixture rows.
 */
interface Row {
  cost: number;
  currency: string;
  usage_quantity: number;
  provider: string;
  region_code: string;
  product: string;
  account: string;
  project_id: string;
  year: number;
  month: number;
  day: number;
}

const RATES: Record<string, number> = { USD: 1, KRW: 1380, JPY: 150, EUR: 0.92, GBP: 0.79, CNY: 7.2 };
const COLS = ['cost', 'currency', 'usage_quantity', 'provider', 'region_code', 'product', 'account', 'project_id', 'year', 'month', 'day'] as const;
const pad = (n: number) => String(n).padStart(2, '0');
const monthOf = (r: Row) => `${r.year}-${pad(r.month)}`;

function fixture(months: number[], n: number, seed: number): Row[] {
  const rows: Row[] = [];
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const currencies = ['USD', 'KRW', 'EUR'];
  for (let i = 0; i < n; i++) {
    const currency = currencies[i % 3];
    rows.push({
      cost: Math.round(rnd() * 100000) / 100 * (currency === 'KRW' ? 1000 : 1),
      currency,
      usage_quantity: Math.round(rnd() * 1000),
      provider: i % 2 ? 'aws' : 'google_cloud',
      region_code: i % 4 < 2 ? 'ap-northeast-2' : 'us-east-1',
      product: ['AmazonEC2', 'AmazonS3', 'BigQuery'][i % 3],
      account: `acct-${i % 2}`,
      project_id: i % 5 === 0 ? '' : `p-${1 + (i % 2)}`,
      year: 2024,
      month: months[i % months.length],
      day: 1 + (i % 28),
    });
  }
  return rows;
}

const toCsv = (rows: Row[]) => [COLS.join(','), ...rows.map((r) => COLS.map((c) => r[c]).join(','))].join('\n') + '\n';
/** Sum of `rows`' costs converted into `cur`, grouped by `key`. */
function expected(rows: Row[], cur: string, key: (r: Row) => string, rates = RATES) {
  const out: Record<string, number> = {};
  for (const r of rows) out[key(r)] = (out[key(r)] ?? 0) + (r.cost * rates[cur]) / rates[r.currency];
  return out;
}
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

jest.setTimeout(60_000);

describe('cost collection', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  let admin: string;
  let otherDomain: string;
  let otherWorkspace: string;
  const fileA = fixture([1, 2], 400, 7);
  const fileB = fixture([2, 3], 300, 11);
  let dsId: string;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    t.startWorker();
    files = await serveFiles({ '/a.csv': toCsv(fileA), '/b.csv': toCsv(fileB) });
    await t.directory.publish('d1', {
      projects: [
        { project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'Project One' },
        { project_id: 'p-2', workspace_id: 'ws-1', project_group_id: '', name: 'Project Two' },
        { project_id: 'p-9', workspace_id: 'ws-2', project_group_id: '', name: 'Elsewhere' },
      ],
      groups: [],
      workspaces: [{ workspace_id: 'ws-1', name: 'Workspace One' }],
    });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherDomain = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner2' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const call = (path: string, auth: string, body: object = {}) => request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', auth).send(body);
  const ok = async (path: string, auth: string, body: object = {}) => {
    const res = await call(path, auth, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const waitJob = (jobId: string, auth = owner) =>
    waitFor(async () => {
      const j = await ok('job/get', auth, { job_id: jobId });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 40_000);
  const allUnified = async (auth = owner) => (await ok('unified-cost/list', auth, { query: { page: { limit: 1000 } } })).results as Record<string, any>[];  
  const register = (name: string, base_url: string | string[], auth = owner) =>
    ok('data-source/register', auth, { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url } } });

  it('registers a data source with the http-file plugin', async () => {
    const ds = await register('csv', [files.url('/a.csv'), files.url('/b.csv')]);
    dsId = ds.data_source_id;
    expect(ds).toMatchObject({
      name: 'csv',
      state: 'ENABLED',
      data_source_type: 'EXTERNAL',
      resource_group: 'WORKSPACE',
      workspace_id: 'ws-1',
      domain_id: 'd1',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', version: '1.1.0', metadata: { currency: 'USD' }, upgrade_mode: 'AUTO' },
      last_synchronized_at: '',
    });
    expect(ds.data_source_id).toMatch(/^ds-[0-9a-f]{12}$/);
    expect(ds).not.toHaveProperty('secret_data');
    const bad = await call('data-source/register', owner, { name: 'x', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: {} } });
    expect(bad.body.error).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER', status: 400 });
    expect((await call('data-source/register', owner, { name: 'x', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'nope' } })).status).toBe(404);
    expect((await call('data-source/register', owner, { name: 'x', resource_group: 'DOMAIN', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: 'http://x' } } })).status).toBe(403);
    expect((await call('data-source/get', otherDomain, { data_source_id: dsId })).status).toBe(404);
    expect((await call('data-source/get', otherWorkspace, { data_source_id: dsId })).status).toBe(404);
  });

  it('collects every month and currency into unified costs, one task per file', async () => {
    const job = await ok('data-source/sync', owner, { data_source_id: dsId });
    expect(job).toMatchObject({ status: 'IN_PROGRESS', total_tasks: 2, data_source_id: dsId });
    const done = await waitJob(job.job_id);
    expect(done).toMatchObject({ status: 'SUCCESS', remained_tasks: 0, error_code: '' });
    expect(done.changed).toEqual([{ start: '2024-01', end: '2024-01' }, { start: '2024-02', end: '2024-02' }, { start: '2024-03', end: '2024-03' }]);

    const tasks = await ok('job-task/list', owner, { job_id: job.job_id, query: { sort: [{ key: 'created_count' }] } });
    expect(tasks.total_count).toBe(2);
    expect(tasks.results.map((x: any) => [x.status, x.created_count])).toEqual([['SUCCESS', 300], ['SUCCESS', 400]]);  
    const task = await ok('job-task/get', owner, { job_task_id: tasks.results[0].job_task_id });
    expect(task).toMatchObject({ job_id: job.job_id, data_source_id: dsId, workspace_id: 'ws-1', error_code: '', error_message: '', options: { base_url: files.url('/b.csv') } });
    for (const k of ['created_at', 'started_at', 'finished_at', 'updated_at']) expect(task[k]).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    const stat = await ok('job-task/stat', owner, { query: { aggregate: [{ group: { keys: [{ key: 'status', name: 'status' }], fields: [{ name: 'n', operator: 'count' }, { key: 'created_count', name: 'rows', operator: 'sum' }] } }] } });
    expect(stat.results).toEqual([{ status: 'SUCCESS', n: 2, rows: 700 }]);

    const all = [...fileA, ...fileB];
    const unified = await allUnified();
    for (const cur of ['USD', 'KRW', 'JPY']) {
      const want = expected(all, cur, monthOf);
      const got: Record<string, number> = {};
      for (const u of unified) got[u.billed_month] = (got[u.billed_month] ?? 0) + u.cost[cur];
      expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
      for (const m of Object.keys(want)) expect(close(got[m], want[m])).toBe(true);
    }
    // One row per group of (project, provider, region, product, currency, month).
    const groups = new Set(all.map((r) => [r.project_id, r.provider, r.region_code, r.product, r.currency, monthOf(r)].join('|')));
    expect(unified).toHaveLength(groups.size);
    const u = unified.find((x) => x.project_id === 'p-1' && x.currency === 'EUR' && x.billed_month === '2024-01')!;
    expect(u).toMatchObject({
      billed_year: '2024',
      aggregation_date: '2024-02-15',
      exchange_date: new Date().toISOString().slice(0, 10),
      exchange_source: 'MANUAL',
      is_confirmed: true,
      project_name: 'Project One',
      data_source_name: 'csv',
      workspace_name: 'Workspace One',
      workspace_id: 'ws-1',
      domain_id: 'd1',
      data_source_id: dsId,
      service_account_id: '',
      service_account_name: '',
    });
    expect(u.region_key).toBe(`${u.provider}.${u.region_code}`);
    expect(Object.keys(u.cost).sort()).toEqual(['JPY', 'KRW', 'USD']);
    expect(close(u.cost.KRW, (u.cost.USD * 1380))).toBe(true);
    expect(await ok('unified-cost/get', owner, { unified_cost_id: u.unified_cost_id })).toEqual(u);
    expect((await call('unified-cost/get', otherDomain, { unified_cost_id: u.unified_cost_id })).status).toBe(404);
    expect((await call('unified-cost/get', otherWorkspace, { unified_cost_id: u.unified_cost_id })).status).toBe(404);
    expect((await ok('data-source/get', owner, { data_source_id: dsId })).last_synchronized_at).not.toBe('');

    // The months had no partition (the migration made last month to a year ahead): the collector made
    // them before writing their first rows, so no row went to a default partition.
    for (const table of ['cost', 'unified_cost']) {
      const { rows } = await t.db.pool.query(`SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM ${table} GROUP BY 1 ORDER BY 1`);
      expect(rows.map((r) => r.part)).toEqual(['2024-01', '2024-02', '2024-03'].map((m) => `${table}_p${m.replace('-', '')}`));
    }
  });

  it('names unified rows alike from the whole directory and, for a large one, from the ids the rows hold', async () => {
    // The rebuild sends the domain's whole directory of names (the first sync above used it); past
    // WHOLE_DIRECTORY_NAMES_MAX only the names of the ids in the months' cost rows.
    const months = ['2024-01', '2024-02', '2024-03'];
    const whole = await directoryNames(t.db.pool, t.deps.directory, 'd1', months);
    expect(JSON.parse(whole.projects)).toEqual({ 'p-1': 'Project One', 'p-2': 'Project Two', 'p-9': 'Elsewhere' });
    expect(JSON.parse(whole.workspaces)).toEqual({ 'ws-1': 'Workspace One' });
    const rowsOnly = await directoryNames(t.db.pool, t.deps.directory, 'd1', months, 3);
    expect(JSON.parse(rowsOnly.projects)).toEqual({ 'p-1': 'Project One', 'p-2': 'Project Two' });
    expect(JSON.parse(rowsOnly.workspaces)).toEqual({ 'ws-1': 'Workspace One' });
    expect(WHOLE_DIRECTORY_NAMES_MAX).toBeGreaterThan(4);
    // Every id the rows hold has the same name either way, and the rows carry it (or the id's fallback).
    for (const u of await allUnified()) {
      expect(JSON.parse(rowsOnly.projects)[u.project_id] ?? u.project_id).toBe(u.project_name);
      expect(JSON.parse(whole.projects)[u.project_id] ?? u.project_id).toBe(u.project_name);
      expect(u.workspace_name).toBe('Workspace One');
    }
  });

  it('a late duplicate attempt of a finished task removes none of its rows', async () => {
    // As when BullMQ hands a stalled task to a second worker that read it before the first one committed.
    const { rows } = await t.db.pool.query(`SELECT * FROM job_task WHERE data_source_id = $1 AND status = 'SUCCESS' ORDER BY job_task_id LIMIT 1`, [dsId]);
    const count = async () => (await t.db.pool.query(`SELECT count(*)::int AS n FROM cost WHERE task_no = $1`, [rows[0].task_no])).rows[0].n;
    const before = await count();
    expect(before).toBeGreaterThan(0);
    await expect((new Collector(t.deps) as any).collect({ ...rows[0], status: 'IN_PROGRESS' })).rejects.toBeDefined();
    expect(await count()).toBe(before);
  });

  it('analyzes monthly by two keys as upstream answers, is_confirmed true keeping confirmed months', async () => {
    const all = [...fileA, ...fileB];
    const query = {
      granularity: 'MONTHLY',
      start: '2024-01',
      end: '2024-03',
      group_by: ['provider', 'product'],
      fields: { cost: { key: 'cost.USD', operator: 'sum' } },
      sort: [{ key: 'cost', desc: true }],
      field_group: ['date'],
    };
    const res = await ok('unified-cost/analyze', owner, { query, is_confirmed: true });
    expect(res.more).toBe(false);
    const want = expected(all, 'USD', (r) => `${r.provider}|${r.product}|${monthOf(r)}`);
    const wantTotals = expected(all, 'USD', (r) => `${r.provider}|${r.product}`);
    expect(res.results).toHaveLength(Object.keys(wantTotals).length);
    for (const row of res.results) {
      expect(close(row._total_cost, wantTotals[`${row.provider}|${row.product}`])).toBe(true);
      for (const { value, date } of row.cost) expect(close(value, want[`${row.provider}|${row.product}|${date}`])).toBe(true);
    }
    const totals = res.results.map((r: any) => r._total_cost);  
    expect([...totals].sort((a, b) => b - a)).toEqual(totals);

    const flat = await ok('unified-cost/analyze', owner, { query: { ...query, field_group: undefined, start: '2024-03', end: '2024-03' }, is_confirmed: true });
    for (const row of flat.results) {
      expect(row.date).toBe('2024-03');
      expect(close(row.cost, want[`${row.provider}|${row.product}|2024-03`])).toBe(true);
    }
    // false is upstream's default (not filtered): the same answer as true here, every month being confirmed
    expect((await ok('unified-cost/analyze', owner, { query, is_confirmed: false })).results).toEqual(res.results);
    const yearly = await ok('unified-cost/analyze', owner, { query: { granularity: 'YEARLY', fields: { n: { operator: 'count' } } }, is_confirmed: true });
    expect(yearly.results).toEqual([{ date: '2024', n: (await allUnified()).length }]);
    const daily = await call('unified-cost/analyze', owner, { query: { ...query, granularity: 'DAILY' }, is_confirmed: true });
    expect(daily.body.error).toMatchObject({ code: 'ERROR_INVALID_PARAMETER', status: 400 });
    expect((await ok('unified-cost/analyze', owner, { query })).results).toEqual(res.results);
    expect((await call('unified-cost/analyze', owner, { is_confirmed: true })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await ok('unified-cost/analyze', otherWorkspace, { query, is_confirmed: true })).results).toEqual([]);
  });

  it('answers stat with a StatisticsQuery', async () => {
    const all = [...fileA, ...fileB];
    const stat = await ok('unified-cost/stat', owner, {
      query: { aggregate: [{ group: { keys: [{ key: 'currency', name: 'currency' }], fields: [{ key: 'cost.KRW', name: 'krw', operator: 'sum' }] } }, { sort: [{ key: 'currency' }] }] },
    });
    const want = expected(all, 'KRW', (r) => r.currency);
    expect(stat.results.map((r: any) => r.currency)).toEqual(Object.keys(want).sort());  
    for (const r of stat.results) expect(close(r.krw, want[r.currency])).toBe(true);
  });

  it('re-collecting replaces the months collected, never doubles them, with the domain rates of the day', async () => {
    expect(await ok('exchange-rate/set', admin, { domain_id: 'd1', currency: 'KRW', rate: 1000 })).toEqual({ currency: 'KRW', rate: 1000, state: 'ENABLED', is_default: false, domain_id: 'd1' });
    // File B now has only its March rows: February comes from file A alone afterwards.
    const newB = fileB.filter((r) => r.month === 3).slice(0, 50);
    files.files['/b.csv'] = toCsv(newB);
    const job = await ok('data-source/sync', owner, { data_source_id: dsId });
    expect((await waitJob(job.job_id)).status).toBe('SUCCESS');
    const rates = { ...RATES, KRW: 1000 };
    const all = [...fileA, ...newB];
    const unified = await allUnified();
    for (const cur of ['USD', 'KRW']) {
      const want = expected(all, cur, monthOf, rates);
      const got: Record<string, number> = {};
      for (const u of unified) got[u.billed_month] = (got[u.billed_month] ?? 0) + u.cost[cur];
      for (const m of Object.keys(want)) expect(close(got[m], want[m])).toBe(true);
    }
    expect(unified.every((u) => u.exchange_source === 'MANUAL (domain rates)')).toBe(true);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM cost');
    expect(rows[0].n).toBe(all.length);
    await ok('exchange-rate/reset', admin, { domain_id: 'd1', currency: 'KRW' });
  });

  it('fails a task on bad rows, naming their lines, and changes nothing', async () => {
    const before = await allUnified();
    const csv = toCsv(fileA.slice(0, 5)).split('\n');
    csv[2] = csv[2].replace(/^[^,]+/, 'abc'); // line 3
    csv[4] = csv[4].replace(/,2024,/, ',2024x,'); // line 5
    files.files['/bad.csv'] = csv.join('\n');
    files.files['/nocol.csv'] = 'cost,currency,year,month\n1,USD,2024,1\n';
    const ds = await register('bad', files.url('/bad.csv'));
    const job = await ok('data-source/sync', owner, { data_source_id: ds.data_source_id });
    const done = await waitJob(job.job_id);
    expect(done).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
    const [task] = (await ok('job-task/list', owner, { job_id: job.job_id })).results;
    expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA', created_count: 0 });
    expect(task.error_message).toContain('2 row(s)');
    expect(task.error_message).toContain('line 3: cost is not a number');
    expect(task.error_message).not.toContain('abc');
    expect(task.error_message).toContain('line 5: billed date');
    expect(task.finished_at).not.toBe('');

    await ok('data-source/update-plugin', owner, { data_source_id: ds.data_source_id, options: { base_url: files.url('/nocol.csv') } });
    const job2 = await ok('data-source/sync', owner, { data_source_id: ds.data_source_id });
    await waitJob(job2.job_id);
    const [task2] = (await ok('job-task/list', owner, { job_id: job2.job_id })).results;
    expect(task2).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COLUMN' });
    expect(task2.error_message).toContain('day');

    await ok('data-source/update-plugin', owner, { data_source_id: ds.data_source_id, options: { base_url: files.url('/missing.csv') } });
    const job3 = await ok('data-source/sync', owner, { data_source_id: ds.data_source_id });
    await waitJob(job3.job_id);
    expect((await ok('job-task/list', owner, { job_id: job3.job_id })).results[0]).toMatchObject({
      error_code: 'ERROR_OUTBOUND_REFUSED',
      error_message: `${OUTBOUND_REFUSED_MESSAGE} (key = options.base_url)`,
    });
    expect((await allUnified()).map((u) => u.unified_cost_id).sort()).toEqual(before.map((u) => u.unified_cost_id).sort());
  });

  it('cancels a running job: its tasks stop, nothing it read is kept', async () => {
    const before = (await allUnified()).map((u) => u.unified_cost_id).sort();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    files.files['/slow.csv'] = (res) => {
      res.write(toCsv(fileA.slice(0, 100)));
      void released.then(() => res.end());
    };
    const ds = await register('slow', [files.url('/slow.csv'), files.url('/a.csv')]);
    const job = await ok('data-source/sync', owner, { data_source_id: ds.data_source_id });
    await waitFor(async () => (await ok('job-task/list', owner, { job_id: job.job_id, status: 'IN_PROGRESS' })).total_count > 0);
    expect((await call('data-source/sync', owner, { data_source_id: ds.data_source_id })).body.error.code).toBe('ERROR_DUPLICATE_JOB');
    const canceled = await ok('job/cancel', owner, { job_id: job.job_id });
    expect(canceled.status).toBe('CANCELED');
    release();
    // The slow file's task stops at its next checkpoint; the other one finished before the cancel or never ran.
    const tasks = await waitFor(async () => {
      const list = (await ok('job-task/list', owner, { job_id: job.job_id })).results as { status: string; options: { base_url: string } }[];
      return list.every((x) => x.status === 'SUCCESS' || x.status === 'CANCELED') ? list : undefined;
    });
    expect(tasks!.find((x) => x.options.base_url.endsWith('/slow.csv'))!.status).toBe('CANCELED');
    expect((await ok('job/get', owner, { job_id: job.job_id })).status).toBe('CANCELED');
    expect((await call('job/cancel', owner, { job_id: job.job_id })).body.error).toMatchObject({ code: 'ERROR_JOB_STATE', status: 400 });
    expect((await allUnified()).map((u) => u.unified_cost_id).sort()).toEqual(before);
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1', [ds.data_source_id]);
    expect(rows[0].n).toBe(0);
  });

  it('deregisters a data source with its costs', async () => {
    await ok('data-source/deregister', owner, { data_source_id: dsId });
    expect((await call('data-source/get', owner, { data_source_id: dsId })).status).toBe(404);
    expect(await allUnified()).toEqual([]);
  });
});
