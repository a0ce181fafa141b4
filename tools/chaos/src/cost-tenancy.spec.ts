import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mintToken, testKeys, waitFor } from '@platform/testing';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './dependencies';
import { startApps, type Supervised } from './processes';

/**
 * Issue #32 against the running cost-analysis (production build, API and worker under the `npm start`
 * supervisor, default settings but a 5 s rate window): domain A registers a 48 MB source without a line
 * break, a 32 MB source whose quote never closes and two sources that trickle a byte every 2 s, and the
 * worker is SIGKILLed while A's tasks run. Domain B's job, synced after all of A's, still finishes before
 * A's trickling jobs end; A's tasks fail at once, naming the bound; the worker's peak RSS stays far
 * under the 512Mi of its k8s limit, and it never dies but when killed.
 */
const MB = 1024 * 1024;
const CSV = 'cost,currency,billed_date\n1.5,USD,2024-02-03\n2,USD,2024-02-04\n';

describe('cost worker tenancy: oversized and trickling sources of one domain beside another domain', () => {
  let dir: string;
  let logFile: string;
  let pgc: PrivatePostgres;
  let redis: PrivateRedis;
  let sup: Supervised;
  let files: http.Server;
  let filesUrl: string;
  let cost: string;
  const tokens: Record<string, string> = {};
  const sent: Record<string, number> = {};

  /** `head`, then `fill` up to `total` bytes, with backpressure; what was written goes to sent[name]. */
  const generated = (name: string, head: string, fill: string, total: number) => (res: ServerResponse) => {
    const block = Buffer.from(fill.repeat(Math.ceil((64 * 1024) / fill.length)));
    sent[name] = head.length;
    res.write(head);
    const pump = () => {
      while (sent[name] < total && !res.destroyed) {
        sent[name] += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  };
  const trickle = (res: ServerResponse) => {
    let i = 0;
    const timer = setInterval(() => (i < CSV.length ? res.write(CSV[i++]) : (clearInterval(timer), res.end())), 2000);
    res.on('close', () => clearInterval(timer));
  };
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/no-newline.csv': generated('no-newline', 'cost,currency,billed_date\n1,USD,', '2024-01-01', 48 * MB),
    '/open-quote.csv': generated('open-quote', 'cost,currency,billed_date\n1,USD,"', 'MARKER-BYTES\n', 32 * MB),
    '/trickle-1.csv': trickle,
    '/trickle-2.csv': trickle,
    '/ok.csv': (res) => res.end(CSV),
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-tenancy-'));
    logFile = path.join(dir, 'processes.log');
    [pgc, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    files = http.createServer((req, res) => {
      const route = routes[req.url ?? ''];
      if (!route) return void res.writeHead(404).end();
      res.on('error', () => {});
      res.writeHead(200, { 'content-type': 'text/csv' });
      route(res);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => files.listen(port, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${port}`;
    const apps = await startApps({
      apps: ['cost-analysis'],
      pg: pgc,
      redisUrl: redis.url,
      dir,
      logFile,
      env: { JWT_PUBLIC_KEY: testKeys.publicPem, OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1', FETCH_RATE_WINDOW_SECONDS: '5', WORKER_LOCK_DURATION_MS: '5000', WORKER_STALLED_INTERVAL_MS: '2000' },
    });
    sup = apps.sup;
    cost = apps.url['cost-analysis'];
    for (const d of ['domain-a', 'domain-b']) tokens[d] = await mintToken({ domainId: d, workspaceId: 'ws', roleType: 'WORKSPACE_OWNER', ttlSeconds: 3600 });
  }, 240_000);

  afterAll(async () => {
    await sup?.stop();
    files?.closeAllConnections();
    files?.close();
    await pgc?.destroy();
    await redis?.destroy();
    if (dir && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
  });

  const post = async (domain: string, p: string, body: unknown) => {
    const res = await fetch(`${cost}/cost-analysis/v1/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[domain]}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const json = JSON.parse(await res.text());
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const sync = async (domain: string, file: string) => {
    const ds = await post(domain, 'data-source/register', { name: file, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: `${filesUrl}${file}` } } });
    return (await post(domain, 'data-source/sync', { data_source_id: ds.data_source_id })).job_id as string;
  };
  const ended = (domain: string, jobId: string) =>
    waitFor(async () => {
      const j = await post(domain, 'job/get', { job_id: jobId });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 120_000, `job ${jobId} to end`, 200);
  const taskOf = async (domain: string, jobId: string) => (await post(domain, 'job-task/list', { job_id: jobId })).results[0];
  const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

  it("fails A's oversized and trickling sources at once while B's job runs beside them, with the worker's memory flat", async () => {
    const jobs: Record<string, string> = {};
    for (const f of ['/trickle-1.csv', '/trickle-2.csv', '/no-newline.csv', '/open-quote.csv']) jobs[f] = await sync('domain-a', f);
    await new Promise((r) => setTimeout(r, 1000));
    // A crash mid-way: the slot A's running task held comes back when its lease lapses.
    const worker = await sup.killAndAwaitRestart('cost-analysis worker');
    const b = await sync('domain-b', '/ok.csv');

    const bDone = await ended('domain-b', b);
    expect(bDone).toMatchObject({ status: 'SUCCESS' });
    const aDone: Record<string, { status: string; finished_at: string }> = {};
    for (const [f, id] of Object.entries(jobs)) aDone[f] = await ended('domain-a', id);
    for (const f of ['/trickle-1.csv', '/trickle-2.csv']) {
      expect(aDone[f].status).toBe('FAILURE');
      expect(Date.parse(aDone[f].finished_at)).toBeGreaterThan(Date.parse(bDone.finished_at));
      expect(await taskOf('domain-a', jobs[f])).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_FETCH_TOO_SLOW' });
    }
    for (const f of ['/no-newline.csv', '/open-quote.csv']) {
      const task = await taskOf('domain-a', jobs[f]);
      expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_CSV_LIMIT', created_count: 0 });
      expect(task.error_message).toMatch(/longer than 65536 characters/);
      expect(task.error_message).not.toMatch(/MARKER|2024-01-01/);
    }
    // Each oversized source was read to its bound only (the rest the socket buffers held), not to its end.
    expect(sent['no-newline']).toBeLessThan(8 * MB);
    expect(sent['open-quote']).toBeLessThan(8 * MB);
    expect(peakRss(worker)).toBeLessThan(256 * MB);
    expect(sup.pid('cost-analysis worker')).toBe(worker);
    expect(sup.exits('cost-analysis worker')).toHaveLength(1); // the kill above
  });
});
