import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { Collector } from './collector/collector';
import { loadConfig } from './config';
import { createTestCostAnalysis, serveFiles } from './test-support';

/**
 * Issue #32 (MEDIUM): the shared cost worker cannot be starved by one tenant. Sources that trickle a
 * byte every 2 s (over loopback) lose their fetch to the minimum rate, a task has a bound on its
 * duration, and one domain holds at most its share of the worker's slots, so another domain's job runs
 * beside them.
 */
jest.setTimeout(120_000);

const CSV = 'cost,currency,billed_date\n1.5,USD,2024-02-03\n2,USD,2024-02-04\n';

/** Sends `text` one byte every `everyMs`; `state.open` counts responses still sending. */
function trickle(text: string, everyMs: number, state: { open: number }) {
  return (res: ServerResponse) => {
    let i = 0;
    state.open++;
    const stop = () => {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      state.open--;
    };
    let timer: NodeJS.Timeout | undefined = setInterval(() => {
      if (i >= text.length) return void (stop(), res.end());
      res.write(text[i++]);
    }, everyMs);
    res.on('close', stop);
  };
}

describe('tenancy of the cost worker (issue #32)', () => {
  const base = loadConfig();
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  const trickling = { open: 0 };
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestCostAnalysis({
      worker: { ...base.worker, concurrency: 2, domainSlots: 1, lockDurationMs: 2000, stalledIntervalMs: 1000, attempts: 3 },
      limits: { ...base.limits, fetchMinBytesPerSecond: 1, fetchRateWindowMs: 6000, taskTimeoutMs: 15000 },
    });
    t.startWorker();
    files = await serveFiles({
      '/ok.csv': CSV,
      // 1 byte every 2 s: 0.5 bytes/s, under the minimum of 1 byte/s; it would take 60 s to end.
      '/trickle-1.csv': trickle(CSV, 2000, trickling),
      '/trickle-2.csv': trickle(CSV, 2000, trickling),
      // 20 bytes/s, above the minimum rate, but longer than the task's bound of 15 s.
      '/slow.csv': trickle(CSV + '3,USD,2024-02-05\n'.repeat(40), 50, { open: 0 }),
    });
    for (const d of ['dA', 'dB', 'dC']) tokens[d] = await bearer({ domainId: d, workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const ok = async (domain: string, path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', tokens[domain]).send(body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const sync = async (domain: string, name: string, url: string) => {
    const ds = await ok(domain, 'data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: url } } });
    return (await ok(domain, 'data-source/sync', { data_source_id: ds.data_source_id })).job_id as string;
  };
  const job = (domain: string, jobId: string) => ok(domain, 'job/get', { job_id: jobId });
  const task = async (domain: string, jobId: string) => (await ok(domain, 'job-task/list', { job_id: jobId })).results[0];
  const ended = (domain: string, jobId: string, timeoutMs = 60_000) =>
    waitFor(async () => {
      const j = await job(domain, jobId);
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, timeoutMs);

  it("two trickling sources of domain A hold one slot; domain B's job runs beside them and finishes first", async () => {
    const a1 = await sync('dA', 'a1', files.url('/trickle-1.csv'));
    const a2 = await sync('dA', 'a2', files.url('/trickle-2.csv'));
    await waitFor(() => trickling.open > 0, 10_000, 'a trickle to start');
    const b = await sync('dB', 'b', files.url('/ok.csv'));
    expect(await ended('dB', b, 30_000)).toMatchObject({ status: 'SUCCESS' });
    // When B is done, domain A's sources are still trickling and neither of A's jobs has ended.
    expect(trickling.open).toBeGreaterThan(0);
    expect((await job('dA', a1)).status).toBe('IN_PROGRESS');
    expect((await job('dA', a2)).status).toBe('IN_PROGRESS');
    expect(trickling.open).toBe(1); // one of A's tasks runs, the other waits for A's one slot

    // Each of A's fetches then fails on the minimum rate, at once and for good (no retry), one after the other.
    for (const a of [a1, a2]) {
      expect(await ended('dA', a)).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
      const failed = await task('dA', a);
      expect(failed).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_FETCH_TOO_SLOW', created_count: 0 });
      expect(failed.error_message).toBe('Fetching the file stopped: the source was slower than 1 bytes/s over 6 s (FETCH_MIN_BYTES_PER_SECOND).');
    }
  });

  it('a task past its bound fails on its own (no sync, no sweep), and its job with it', async () => {
    const c = await sync('dC', 'slow', files.url('/slow.csv'));
    expect(await ended('dC', c, 30_000)).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
    expect(await task('dC', c)).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_TASK_TIMEOUT', error_message: 'The task did not finish within 15 s (TASK_TIMEOUT_SECONDS).' });
  });

  it('the sweep fails a task running far past its bound (a wedged worker), and its job', async () => {
    const c = await sync('dC', 'wedged', files.url('/trickle-1.csv'));
    const running = await waitFor(async () => ((await task('dC', c)).status === 'IN_PROGRESS' ? task('dC', c) : undefined), 10_000);
    // As if it had started an hour ago: far past TASK_TIMEOUT_SECONDS and the sweep's grace.
    await t.db.pool.query(`UPDATE job_task SET started_at = now() - interval '1 hour' WHERE job_task_id = $1`, [running.job_task_id]);
    const swept = await new Collector(t.deps).sweep();
    expect(swept.failed).toBeGreaterThanOrEqual(1);
    expect(await task('dC', c)).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_TASK_TIMEOUT' });
    expect(await job('dC', c)).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
  });
});
