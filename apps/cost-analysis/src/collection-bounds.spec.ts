import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from './test-support';

/**
 * Issue #32 (HIGH): a data source cannot stall or kill the shared cost worker. Sources of tens of MB
 * without a line break, or with a quote that never closes, are generated as streams by a loopback
 * server (never held in memory); the task fails at once naming the bound, the server is asked for a
 * small part of the file only, and the worker's memory (this process: the worker runs here) stays flat.
 */
jest.setTimeout(120_000);

const MB = 1024 * 1024;
const SOURCE_BYTES = 32 * MB;

/** Streams `head` then `fill` repeated up to SOURCE_BYTES, with backpressure; counts what was written. */
function generated(head: string, fill: string, sent: { bytes: number }) {
  return (res: ServerResponse) => {
    const block = Buffer.from(fill.repeat(Math.ceil((64 * 1024) / fill.length)));
    res.write(head);
    sent.bytes = head.length;
    const pump = () => {
      while (sent.bytes < SOURCE_BYTES) {
        sent.bytes += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    pump();
  };
}

describe('collection bounds (issue #32)', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  const sent = { noNewline: { bytes: 0 }, openQuote: { bytes: 0 } };

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    t.startWorker();
    files = await serveFiles({
      '/no-newline.csv': generated('cost,currency,billed_date\n1,USD,', '2024-01-01'.repeat(4), sent.noNewline),
      '/open-quote.csv': generated('cost,currency,billed_date\n1,USD,"', 'SECRET-BYTES\n', sent.openQuote),
    });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const ok = async (path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  /** Registers a data source on `url`, syncs it and answers its one task once the job ended. */
  const collect = async (name: string, url: string) => {
    const ds = await ok('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: url } } });
    const job = await ok('data-source/sync', { data_source_id: ds.data_source_id });
    const done = await waitFor(async () => {
      const j = await ok('job/get', { job_id: job.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 100_000);
    const tasks = await ok('job-task/list', { job_id: job.job_id });
    return { job: done, task: tasks.results[0] };
  };

  it.each([
    ['no-newline', 'noNewline', /line 2: a field is longer than 65536 characters \(the bound is 65536\)/],
    ['open-quote', 'openQuote', /line 2: a quoted field is longer than 65536 characters \(the bound is 65536\)/],
  ] as const)('a %s source of 32 MB fails its task at once, reading a small part of it, with the worker memory flat', async (name, key, message) => {
    global.gc?.();
    const before = process.memoryUsage();
    let peakRss = before.rss;
    let peakHeap = before.heapUsed;
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 20);
    try {
      const { job, task } = await collect(name, files.url(`/${name}.csv`));
      expect(job).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
      expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_CSV_LIMIT', created_count: 0 });
      expect(task.error_message).toMatch(message);
      expect(task.error_message).not.toContain('SECRET');
      expect(task.error_message).not.toContain('2024-01-01');
    } finally {
      clearInterval(sample);
    }
    // The reader stopped at the bound: the server wrote at most what the socket buffers held past it.
    expect(sent[key].bytes).toBeLessThan(8 * MB);
    expect(peakRss - before.rss).toBeLessThan(100 * MB);
    expect(peakHeap - before.heapUsed).toBeLessThan(100 * MB);
  });
});
