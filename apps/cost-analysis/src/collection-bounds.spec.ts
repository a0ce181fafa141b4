import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { loadConfig } from './config';
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
    const base = loadConfig();
    t = await createTestCostAnalysis({ limits: { ...base.limits, maxRows: 50, maxTagsPerRow: 10, maxTagValueChars: 100, maxTagKeys: 30 } });
    t.startWorker();
    await t.directory.publish('d1', {
      projects: [
        { project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'Mine' },
        { project_id: 'p-9', workspace_id: 'ws-2', project_group_id: '', name: 'Elsewhere' },
      ],
      groups: [],
      workspaces: [{ workspace_id: 'ws-1', name: 'One' }],
    });
    const row = (i: number, extra = '') => `1,USD,2024-02-0${1 + (i % 9)}${extra}\n`;
    const tagHeader = (n: number) => Array.from({ length: n }, (_, i) => `,tags.k${i}`).join('');
    files = await serveFiles({
      '/rows.csv': 'cost,currency,billed_date\n' + Array.from({ length: 51 }, (_, i) => row(i)).join(''),
      '/tag-columns.csv': `cost,currency,billed_date${tagHeader(11)}\n${row(0, ','.repeat(11))}`,
      '/huge-header.csv': (res) => {
        res.write('cost,currency,billed_date');
        for (let i = 0; i < 200; i++) res.write(Array.from({ length: 1000 }, (_, k) => `,tags.k${i * 1000 + k}`).join(''));
        res.end('\n');
      },
      '/tag-json.csv': `cost,currency,billed_date,tags\n${row(0, `,"{${Array.from({ length: 11 }, (_, k) => `""k${k}"":""v""`).join(',')}}"`)}${row(1, `,"{""k"":""${'v'.repeat(101)}""}"`)}`,
      '/tag-keys.csv': 'cost,currency,billed_date,tags\n' + Array.from({ length: 4 }, (_, i) => row(i, `,"{${Array.from({ length: 10 }, (_, k) => `""k${i * 10 + k}"":""v""`).join(',')}}"`)).join(''),
      '/projects.csv': 'cost,currency,billed_date,project_id\n' + row(0, ',p-1') + row(1, ',p-9') + row(2, ',p-404'),
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

  // issue #32 (LOW): rows, tags (count, size, distinct keys) and columns of a collection are bounded
  it.each([
    ['rows', 'ERROR_COLLECT_LIMIT', /^The task has more than 50 cost rows \(COLLECT_MAX_ROWS\)\.$/],
    ['tag-columns', 'ERROR_COLLECT_LIMIT', /^The CSV header has 11 tag columns, more than 10 \(COLLECT_MAX_TAGS_PER_ROW\)\.$/],
    ['huge-header', 'ERROR_CSV_LIMIT', /^CSV error at line 1: a record has more than 1000 fields \(the bound is 1000\)\.$/],
    ['tag-json', 'ERROR_INVALID_COST_DATA', /line 2: more than 10 tags \(COLLECT_MAX_TAGS_PER_ROW\); line 3: a tag value is longer than 100 characters/],
    ['tag-keys', 'ERROR_COLLECT_LIMIT', /^The data source has more than 30 distinct tag or additional_info keys \(COLLECT_MAX_TAG_KEYS\)\.$/],
  ] as const)('a %s source past its bound fails its task, naming the bound', async (name, code, message) => {
    const { job, task } = await collect(`cap-${name}`, files.url(`/${name}.csv`));
    expect(job).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_JOB_TASK' });
    expect(task).toMatchObject({ status: 'FAILURE', error_code: code, created_count: 0 });
    expect(task.error_message).toMatch(message);
  });

  // issue #32 (LOW): a task's error does not tell another workspace's project from an unknown one
  it("reports another workspace's project and an unknown project alike", async () => {
    const { task } = await collect('projects', files.url('/projects.csv'));
    expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_INVALID_COST_DATA' });
    expect(task.error_message).toBe(
      '2 row(s) are not valid cost data: line 3: project_id is not a project this data source may write to; line 4: project_id is not a project this data source may write to',
    );
  });
});
