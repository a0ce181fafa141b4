import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from '../test-support';
import { nextSlot } from './schedule';
import { DataSourceScheduler, SCHEDULER_ID } from './scheduler';

/**
 * Data source schedules: what register/update/get answer, and the scheduler (real Postgres and
 * Redis) under a clock the test sets, so no test waits for an hour or depends on when it runs.
 */
jest.setTimeout(60_000);

const PLUGIN = 'plugin-http-file-cost-datasource';
const SECRET = 'tok-sched-5521';

describe('nextSlot', () => {
  const at = (iso: string) => new Date(iso);
  it('is the first whole UTC hour in hours strictly after the time, across days, months, years and leap days', () => {
    expect(nextSlot([0, 12], at('2025-01-01T23:30:00Z'))).toEqual(at('2025-01-02T00:00:00Z'));
    expect(nextSlot([0, 12], at('2025-01-01T12:00:00Z'))).toEqual(at('2025-01-02T00:00:00Z'));
    expect(nextSlot([0, 12], at('2025-01-01T11:59:59.999Z'))).toEqual(at('2025-01-01T12:00:00Z'));
    expect(nextSlot([5], at('2025-12-31T06:00:00Z'))).toEqual(at('2026-01-01T05:00:00Z'));
    expect(nextSlot([23], at('2025-01-31T23:00:00Z'))).toEqual(at('2025-02-01T23:00:00Z'));
    expect(nextSlot([0], at('2024-02-28T23:10:00Z'))).toEqual(at('2024-02-29T00:00:00Z'));
    expect(nextSlot([3, 9], at('2025-06-30T09:00:00.001Z'))).toEqual(at('2025-07-01T03:00:00Z'));
    expect(nextSlot([], at('2025-01-01T00:00:00Z'))).toBeNull();
  });
});

describe('data source schedule', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  const answers: string[] = [];

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    files = await serveFiles({ '/c.csv': 'cost,currency,year,month,day\n1.5,USD,2025,3,1\n2.5,USD,2025,3,2\n' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const call = async (path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    answers.push(res.text);
    return res;
  };
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const register = (name: string, extra: object = {}) =>
    ok('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: PLUGIN, options: { base_url: files.url('/c.csv') } }, ...extra });
  const jobsOf = async (id: string) =>
    (await t.db.pool.query(`SELECT job_id, status, error_code, options, scheduled_at FROM job WHERE data_source_id = $1 ORDER BY created_at`, [id])).rows;
  const scheduler = () => new DataSourceScheduler({ ...t.deps, clock: t.clock.now });

  describe('register, update, get', () => {
    it('gives a new data source upstream default schedule (ENABLED at 16:00 UTC) and its next run', async () => {
      t.clock.set('2025-03-10T15:20:00Z');
      const ds = await register('default');
      expect(ds.schedule).toEqual({ state: 'ENABLED', hour: 16, hours: [16] });
      expect(ds.next_sync_at).toBe('2025-03-10T16:00:00.000Z');
      t.clock.set('2025-03-10T16:00:00Z'); // the slot itself is taken: the next one is tomorrow's
      expect((await register('default-2')).next_sync_at).toBe('2025-03-11T16:00:00.000Z');
    });

    it('takes hours (a list) or upstream hour, and returns them in register, get and list', async () => {
      t.clock.set('2025-03-10T12:00:00Z');
      const ds = await register('two-hours', { schedule: { state: 'ENABLED', hours: [12, 0] } });
      expect(ds.schedule).toEqual({ state: 'ENABLED', hour: 0, hours: [0, 12] });
      expect(ds.next_sync_at).toBe('2025-03-11T00:00:00.000Z');
      const got = await ok('data-source/get', { data_source_id: ds.data_source_id });
      expect(got).toMatchObject({ schedule: ds.schedule, next_sync_at: ds.next_sync_at });
      const listed = await ok('data-source/list', { data_source_id: ds.data_source_id });
      expect(listed.results[0]).toMatchObject({ schedule: ds.schedule, next_sync_at: ds.next_sync_at });
      const only = await ok('data-source/list', { data_source_id: ds.data_source_id, query: { only: ['data_source_id', 'schedule', 'next_sync_at'] } });
      expect(only.results).toEqual([{ data_source_id: ds.data_source_id, schedule: ds.schedule, next_sync_at: ds.next_sync_at }]);
      const minimal = await ok('data-source/list', { data_source_id: ds.data_source_id, query: { minimal: true } });
      expect(minimal.results[0]).toMatchObject({ schedule: ds.schedule, next_sync_at: ds.next_sync_at });
      const late = await register('sort-late', { schedule: { hours: [11] } }); // 2025-03-11T11:00
      const sorted = await ok('data-source/list', { query: { filter: [{ k: 'name', v: ['two-hours', 'sort-late'], o: 'in' }], sort: [{ key: 'next_sync_at', desc: true }], only: ['name'] } });
      expect(sorted.results.map((r: { name: string }) => r.name)).toEqual([late.name, 'two-hours']);
      const filtered = await ok('data-source/list', { query: { filter: [{ k: 'schedule.state', v: 'DISABLED', o: 'eq' }] } });
      expect(filtered.total_count).toBe(0);

      const upstream = await register('upstream-hour', { schedule: { state: 'ENABLED', hour: 19 } });
      expect(upstream).toMatchObject({ schedule: { state: 'ENABLED', hour: 19, hours: [19] }, next_sync_at: '2025-03-10T19:00:00.000Z' });
      const stateless = await register('no-state', { schedule: { hours: [23] } });
      expect(stateless).toMatchObject({ schedule: { state: 'ENABLED', hours: [23] }, next_sync_at: '2025-03-10T23:00:00.000Z' });
      // DISABLED keeps the default hour for a later ENABLED; with hours: [] it has none.
      const off = await register('disabled', { schedule: { state: 'DISABLED' } });
      expect(off).toMatchObject({ schedule: { state: 'DISABLED', hour: 16, hours: [16] }, next_sync_at: null });
      const none = await register('disabled-no-hours', { schedule: { state: 'DISABLED', hours: [] } });
      expect(none).toMatchObject({ schedule: { state: 'DISABLED', hour: null, hours: [] }, next_sync_at: null });
    });

    it('update changes the schedule; DISABLED keeps the hours and has no next run; data source disable/enable count from now', async () => {
      t.clock.set('2025-03-10T08:30:00Z');
      const ds = await register('updated', { schedule: { state: 'ENABLED', hours: [6] } });
      expect(ds.next_sync_at).toBe('2025-03-11T06:00:00.000Z');
      const u1 = await ok('data-source/update', { data_source_id: ds.data_source_id, schedule: { hours: [9, 21] } });
      expect(u1).toMatchObject({ schedule: { state: 'ENABLED', hours: [9, 21] }, next_sync_at: '2025-03-10T09:00:00.000Z' });
      const u2 = await ok('data-source/update', { data_source_id: ds.data_source_id, schedule: { state: 'DISABLED' } });
      expect(u2).toMatchObject({ schedule: { state: 'DISABLED', hour: 9, hours: [9, 21] }, next_sync_at: null });
      t.clock.set('2025-03-10T21:00:00Z');
      const u3 = await ok('data-source/update', { data_source_id: ds.data_source_id, schedule: { state: 'ENABLED' } });
      expect(u3).toMatchObject({ schedule: { state: 'ENABLED', hours: [9, 21] }, next_sync_at: '2025-03-11T09:00:00.000Z' });
      const tags = await ok('data-source/update', { data_source_id: ds.data_source_id, tags: { a: 'b' } });
      expect(tags).toMatchObject({ schedule: u3.schedule, next_sync_at: u3.next_sync_at });

      expect(await ok('data-source/disable', { data_source_id: ds.data_source_id })).toMatchObject({ state: 'DISABLED', schedule: { state: 'ENABLED' }, next_sync_at: null });
      t.clock.set('2025-03-12T10:00:00Z'); // slots passed while disabled are not run on enable
      expect(await ok('data-source/enable', { data_source_id: ds.data_source_id })).toMatchObject({ state: 'ENABLED', next_sync_at: '2025-03-12T21:00:00.000Z' });
      t.clock.set('2025-03-13T10:00:00Z'); // enabling an enabled data source changes nothing (an overdue slot stays due)
      expect(await ok('data-source/enable', { data_source_id: ds.data_source_id })).toMatchObject({ state: 'ENABLED', next_sync_at: '2025-03-12T21:00:00.000Z' });
    });

    it('refuses bad schedules with 400', async () => {
      t.clock.set('2025-03-10T08:30:00Z');
      const ds = await register('bad-target');
      const bad: unknown[] = [
        { hours: [24] },
        { hours: [-1] },
        { hours: [1.5] },
        { hours: ['3'] },
        { hours: [1, 1] },
        { hours: Array.from({ length: 25 }, (_, i) => i % 24) },
        { hours: 3 },
        { hour: 24 },
        { hour: 3, hours: [4] },
        { state: 'PAUSED', hours: [1] },
        { state: 'ENABLED', hours: [] },
        { hours: [1], days: [1] },
        'daily',
      ];
      for (const schedule of bad) {
        const r1 = await call('data-source/register', { name: `bad-${answers.length}`, resource_group: 'WORKSPACE', plugin_info: { plugin_id: PLUGIN, options: { base_url: files.url('/c.csv') } }, schedule });
        expect([JSON.stringify(schedule), r1.status, r1.body.error?.code]).toEqual([JSON.stringify(schedule), 400, expect.stringMatching(/^ERROR_(INVALID|REQUIRED)_PARAMETER$/)]);
        const r2 = await call('data-source/update', { data_source_id: ds.data_source_id, schedule });
        expect([JSON.stringify(schedule), r2.status]).toEqual([JSON.stringify(schedule), 400]);
      }
      // ENABLED without hours on a data source that has none
      const off = await register('off-then-on', { schedule: { state: 'DISABLED', hours: [] } });
      const r = await call('data-source/update', { data_source_id: off.data_source_id, schedule: { state: 'ENABLED' } });
      expect(r.body.error).toMatchObject({ code: 'ERROR_INVALID_PARAMETER', status: 400 });
      expect(r.body.error.message).toMatch(/schedule\.hours/);
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).schedule).toEqual({ state: 'ENABLED', hour: 16, hours: [16] });
    });

    it('documents schedule in the OpenAPI of register and update', async () => {
      const doc = await request(t.app).get('/cost-analysis/openapi.json');
      expect(doc.status).toBe(200);
      for (const verb of ['register', 'update']) {
        const op = doc.body.paths[`/cost-analysis/v1/data-source/${verb}`].post;
        const schema = op.requestBody.content['application/json'].schema;
        expect(JSON.stringify(schema)).toMatch(/"schedule".*"hours"/);
      }
    });

    it('keeps plugin_info.secret_id: the id of the sealed secret_data, or the caller reference without it', async () => {
      const sealed = await register('with-secret', { plugin_info: { plugin_id: PLUGIN, options: { base_url: files.url('/c.csv') }, secret_data: { token: SECRET }, secret_id: 'secret-upstream1' } });
      expect(sealed.plugin_info.secret_id).toMatch(/^secret-[0-9a-f]{12}$/);
      const ref = await register('with-ref', { plugin_info: { plugin_id: PLUGIN, options: { base_url: files.url('/c.csv') }, secret_id: 'secret-ca134639483' } });
      expect(ref.plugin_info.secret_id).toBe('secret-ca134639483');
      const none = await register('without');
      expect(none.plugin_info.secret_id).toBe('');
      const upd = await ok('data-source/update-plugin', { data_source_id: sealed.data_source_id, options: { base_url: files.url('/c.csv') } });
      expect(upd.plugin_info.secret_id).toBe(sealed.plugin_info.secret_id);
      expect((await ok('data-source/get', { data_source_id: ref.data_source_id })).plugin_info.secret_id).toBe('secret-ca134639483');
      expect(answers.join('\n')).not.toContain(SECRET);
    });
  });

  describe('the scheduler', () => {
    // Each test starts with no data source, so only its own can be due.
    beforeEach(async () => {
      await t.db.pool.query(`DELETE FROM job_task; DELETE FROM job; DELETE FROM data_source`);
    });

    /** A fresh data source due at `hours`, registered with the clock at `at`. */
    const due = async (name: string, at: string, schedule: object) => {
      t.clock.set(at);
      return register(name, { schedule });
    };

    it('runs a due slot exactly once with two schedulers ticking at the same time, and moves next_sync_at on', async () => {
      const ds = await due('s-once', '2025-04-01T15:20:00Z', { hours: [16] });
      const other = await due('s-other-hour', '2025-04-01T15:20:00Z', { hours: [17] });
      const off = await due('s-off', '2025-04-01T15:20:00Z', { state: 'DISABLED', hours: [16] });
      const disabled = await due('s-ds-disabled', '2025-04-01T15:20:00Z', { hours: [16] });
      await ok('data-source/disable', { data_source_id: disabled.data_source_id });

      t.clock.set('2025-04-01T15:59:59.999Z'); // not due yet
      expect(await scheduler().tick()).toMatchObject({ created: 0, failed: 0 });
      expect(await jobsOf(ds.data_source_id)).toEqual([]);

      t.clock.set('2025-04-01T16:00:30Z');
      const [a, b] = await Promise.all([scheduler().tick(), scheduler().tick()]);
      expect(a.created + b.created).toBe(1);
      expect(a.errors + b.errors + a.failed + b.failed).toBe(0);
      const jobs = await jobsOf(ds.data_source_id);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ status: 'IN_PROGRESS', options: { sync_mode: 'SCHEDULED', scheduled_at: '2025-04-01T16:00:00.000Z' }, scheduled_at: new Date('2025-04-01T16:00:00Z') });
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).next_sync_at).toBe('2025-04-02T16:00:00.000Z');
      // not due, DISABLED schedule, disabled data source: nothing
      expect(await jobsOf(other.data_source_id)).toEqual([]);
      expect(await jobsOf(off.data_source_id)).toEqual([]);
      expect(await jobsOf(disabled.data_source_id)).toEqual([]);
      // the tasks are in the collection queue
      const tasks = (await t.db.pool.query(`SELECT job_task_id FROM job_task WHERE job_id = $1`, [jobs[0].job_id])).rows;
      expect(tasks).toHaveLength(1);
      expect(await t.deps.queue.getJobState(tasks[0].job_task_id)).toBe('waiting');

      // A restarted scheduler (a new instance, as after a worker restart) does not run the slot again.
      t.clock.set('2025-04-01T16:05:00Z');
      expect((await scheduler().tick()).created).toBe(0);
      t.clock.set('2025-04-01T17:00:00Z');
      expect((await scheduler().tick()).created).toBe(1); // `other`'s hour only
      expect(await jobsOf(ds.data_source_id)).toHaveLength(1);
      expect(await jobsOf(other.data_source_id)).toHaveLength(1);
    });

    it('a sync still running at its slot makes a FAILURE job (upstream ERROR_DUPLICATE_JOB); the slot is spent', async () => {
      const ds = await due('s-busy', '2025-05-01T00:10:00Z', { hours: [1, 2] });
      const manual = await ok('data-source/sync', { data_source_id: ds.data_source_id });
      expect(manual.options).toMatchObject({ sync_mode: 'MANUAL' });
      t.clock.set('2025-05-01T01:00:10Z');
      expect(await scheduler().tick()).toMatchObject({ created: 0, failed: 1 });
      const jobs = await jobsOf(ds.data_source_id);
      expect(jobs.map((j) => [j.status, j.error_code])).toEqual([
        ['IN_PROGRESS', ''],
        ['FAILURE', 'ERROR_DUPLICATE_JOB'],
      ]);
      expect(await scheduler().tick()).toMatchObject({ created: 0, failed: 0 });
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).next_sync_at).toBe('2025-05-01T02:00:00.000Z');
      // The on-demand sync is refused while it runs, as before.
      expect((await call('data-source/sync', { data_source_id: ds.data_source_id })).body.error).toMatchObject({ code: 'ERROR_DUPLICATE_JOB', status: 409 });
    });

    it('after a gap with no scheduler, catches up once (not once per missed slot)', async () => {
      const ds = await due('s-gap', '2025-06-01T01:00:00Z', { hours: [3, 9] });
      expect(ds.next_sync_at).toBe('2025-06-01T03:00:00.000Z');
      t.clock.set('2025-06-02T10:30:00Z'); // missed 03:00 and 09:00 of two days
      expect((await scheduler().tick()).created).toBe(1);
      expect(await jobsOf(ds.data_source_id)).toHaveLength(1);
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).next_sync_at).toBe('2025-06-03T03:00:00.000Z');
      t.clock.set('2025-06-02T10:31:00Z');
      await scheduler().tick();
      expect(await jobsOf(ds.data_source_id)).toHaveLength(1);
    });

    it('a slot whose transaction fails stays due (nothing half-done), and the database refuses a second job for a slot', async () => {
      const ds = await due('s-rollback', '2025-08-01T05:10:00Z', { hours: [6] });
      // A job already recorded for the 06:00 slot (as if another scheduler had written it): the unique
      // (data source, scheduled_at) index fails the tick's insert, and its claim rolls back with it.
      await t.db.pool.query(
        `INSERT INTO job (domain_id, job_id, workspace_id, resource_group, data_source_id, status, scheduled_at) VALUES ('d1', 'job-planted', 'ws-1', 'WORKSPACE', $1, 'SUCCESS', '2025-08-01T06:00:00Z')`,
        [ds.data_source_id],
      );
      t.clock.set('2025-08-01T06:00:20Z');
      expect(await scheduler().tick()).toMatchObject({ created: 0, failed: 0, errors: 1 });
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).next_sync_at).toBe('2025-08-01T06:00:00.000Z');
      expect((await t.db.pool.query(`SELECT count(*)::int AS n FROM job_task`)).rows[0].n).toBe(0);
      await t.db.pool.query(`DELETE FROM job WHERE job_id = 'job-planted'`);
      t.clock.set('2025-08-01T06:01:20Z'); // the next tick takes the slot
      expect(await scheduler().tick()).toMatchObject({ created: 1, errors: 0 });
      expect((await jobsOf(ds.data_source_id)).map((j) => j.scheduled_at)).toEqual([new Date('2025-08-01T06:00:00Z')]);
    });

    it('the migration gives existing data sources upstream default schedule, due at the next 16:00 UTC', async () => {
      const ds = await due('s-migrated', '2025-08-01T05:10:00Z', { hours: [2] });
      await t.db.pool.query(`UPDATE data_source SET schedule_hours = DEFAULT, schedule_state = DEFAULT, next_sync_at = NULL WHERE data_source_id = $1`, [ds.data_source_id]);
      const dir = path.join(__dirname, '../../prisma/migrations');
      const sql = readFileSync(path.join(dir, readdirSync(dir).find((d) => d.endsWith('_data_source_schedule'))!, 'migration.sql'), 'utf8');
      await t.db.pool.query(sql.slice(sql.indexOf('UPDATE "data_source"')));
      const { rows } = await t.db.pool.query(`SELECT schedule_state, schedule_hours, next_sync_at, now() AS now FROM data_source WHERE data_source_id = $1`, [ds.data_source_id]);
      expect(rows[0]).toMatchObject({ schedule_state: 'ENABLED', schedule_hours: [16], next_sync_at: nextSlot([16], rows[0].now) });
    });

    it('runs on BullMQ: one job scheduler for several replicas, declared again after Redis loses it, and a tick collects the data', async () => {
      const ds = await due('s-bullmq', '2025-07-01T07:30:00Z', { hours: [8] });
      t.startWorker();
      const r1 = t.startScheduler();
      const r2 = t.startScheduler();
      await Promise.all([r1.ensure(), r2.ensure(), r1.ensure()]);
      expect((await r1.queue.getJobSchedulers()).map((s) => s.key)).toEqual([SCHEDULER_ID]);
      expect(await r1.queue.getDelayedCount()).toBe(1);

      // Redis lost everything: declaring again brings the scheduler back.
      await r1.queue.obliterate({ force: true });
      expect(await r1.queue.getJobSchedulers()).toEqual([]);
      await r2.ensure();
      expect((await r1.queue.getJobSchedulers()).map((s) => s.key)).toEqual([SCHEDULER_ID]);

      // Ticks (as the job scheduler makes them) reach both replicas' workers; one job for the slot.
      t.clock.set('2025-07-01T08:00:05Z');
      const ticks = await Promise.all([r1.queue.add('tick', {}), r2.queue.add('tick', {}), r1.queue.add('tick', {})]);
      for (const tick of ticks) await waitFor(async () => (await tick.getState()) === 'completed', 30_000, 'the tick');
      const jobs = await jobsOf(ds.data_source_id);
      expect(jobs).toHaveLength(1);
      const done = await waitFor(async () => {
        const j = await ok('job/get', { job_id: jobs[0].job_id });
        return j.status !== 'IN_PROGRESS' ? j : undefined;
      }, 40_000, 'the scheduled job');
      expect(done).toMatchObject({ status: 'SUCCESS', options: { sync_mode: 'SCHEDULED' } });
      const costs = await ok('unified-cost/list', { query: { filter: [{ k: 'data_source_id', v: ds.data_source_id, o: 'eq' }] } });
      expect(costs.results.map((c: { cost: { USD: number } }) => c.cost.USD)).toEqual([4]);
    });
  });
});
