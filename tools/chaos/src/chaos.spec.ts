import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { DirectoryPublisher } from '@platform/directory';
import { mintToken, testKeys, waitFor } from '@platform/testing';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './dependencies';
import { startApps, type Supervised } from './processes';

/**
 * Chaos: monitoring (API + worker) ingests a steady stream of webhook deliveries while cost-analysis
 * (API + worker) collects a cost job from CSV files over HTTP, both built as for production, run by
 * the `npm start` supervisor, on a PostgreSQL cluster and a Redis (AOF, fsync always) of the test's
 * own. Meanwhile: both workers are SIGKILLed (the supervisor restarts them), Redis is SIGKILLed and
 * started again from its AOF, PostgreSQL is restarted (`pg_ctl restart -m fast`), stopped `-m fast`
 * (down 1.5 s) and stopped `-m immediate` (a crash, down 20 s: longer than a job's retries last), then
 * started again. Then:
 * - every delivery answered 2xx is stored exactly once, one refused with 503 and not sent again is
 *   not stored, and no answer is anything but 200 or 503;
 * - while PostgreSQL is down 20 s (Redis up), senders that never retry keep posting to a webhook of
 *   their own: at least 99 % of their posts are accepted (the URL checks the webhook against its
 *   copy in Redis), and each accepted one is stored exactly once when PostgreSQL is back;
 * - the cost job, under way at every fault, ends SUCCESS and its rows are the CSV files' rows, each
 *   exactly once;
 * - /readyz and an operation of each API answer 503 during each outage (never 500, never a hang) and
 *   200 after it, with no restart of the APIs: the only processes that ever exited are the two
 *   workers, once each, when the test killed them.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DOMAIN = 'domain-chaos';
const WORKSPACE = 'workspace-chaos';
const PROJECT = 'project-chaos';

/** The cost files: FILES files of ROWS rows, each row unique (usage_type = its id), over three months and two currencies. */
const FILES = 40;
const ROWS = 1000;
const CHUNK = 100;
/** How long PostgreSQL stays down after the crash. */
const LONG_OUTAGE_MS = 20_000;
/** The share of one-shot posts (never retried) the URL must accept while PostgreSQL is down and Redis up. */
const MIN_ACCEPTED_WHILE_POSTGRES_DOWN = 0.99;
const CSV_HEADER = 'cost,currency,usage_type,provider,year,month,day\n';
function csvRow(file: number, i: number) {
  const n = file * ROWS + i;
  return { cost: ((n * 7919) % 100_000) / 100, currency: n % 3 ? 'USD' : 'EUR', id: `r-${file}-${i}`, month: 1 + (n % 3), day: 1 + (n % 28) };
}
const csvLine = (file: number, i: number) => {
  const r = csvRow(file, i);
  return `${r.cost},${r.currency},${r.id},aws,2024,${r.month},${r.day}\n`;
};

/** What the CSV files hold, per (month, currency): row count and cost sum in cents (exact). */
function expectedCosts() {
  const out = new Map<string, { n: number; cents: number }>();
  for (let f = 0; f < FILES; f++) {
    for (let i = 0; i < ROWS; i++) {
      const r = csvRow(f, i);
      const k = `2024-${String(r.month).padStart(2, '0')} ${r.currency}`;
      const e = out.get(k) ?? { n: 0, cents: 0 };
      e.n++;
      e.cents += Math.round(r.cost * 100);
      out.set(k, e);
    }
  }
  return [...out.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => ({ key: k, ...v }));
}

interface Sample {
  at: number;
  what: string;
  status: number;
  error?: string;
}

describe('chaos: worker kills, a Redis kill and PostgreSQL restarts during webhook ingestion and cost collection', () => {
  let dir: string;
  let logFile: string;
  let pgc: PrivatePostgres;
  let redis: PrivateRedis;
  let sup: Supervised;
  let files: http.Server;
  let monitoring: string;
  let cost: string;
  let token: string;
  const startedAt = Date.now();
  let faultsDone = false;
  /** Set when the load is to stop (also by afterAll, should a test fail half-way). */
  let stopping = false;
  const fileRequests = new Map<number, number>();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-'));
    logFile = path.join(dir, 'processes.log');
    [pgc, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    // identity's share: the project directory in Redis.
    const r = new Redis(redis.url);
    await new DirectoryPublisher(r).publish(DOMAIN, {
      projects: [{ project_id: PROJECT, workspace_id: WORKSPACE, project_group_id: '', name: 'chaos' }],
      groups: [],
      workspaces: [{ workspace_id: WORKSPACE, name: 'chaos' }],
    });
    r.disconnect();

    // The cost files: streamed CHUNK rows at a time, slowly while faults are under way (a file takes
    // about 2 s, so the job spans them), at once afterwards. Every request gets the whole file again.
    files = http.createServer((req, res) => {
      const f = Number(/^\/f(\d+)\.csv$/.exec(req.url ?? '')?.[1] ?? -1);
      if (!(f >= 0 && f < FILES)) return void res.writeHead(404).end();
      fileRequests.set(f, (fileRequests.get(f) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(CSV_HEADER);
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        let chunk = '';
        for (const end = faultsDone ? ROWS : Math.min(ROWS, i + CHUNK); i < end; i++) chunk += csvLine(f, i);
        if (i >= ROWS) return void res.end(chunk);
        res.write(chunk);
        setTimeout(next, 200);
      };
      next();
    });
    const filesPort = await freePort();
    await new Promise<void>((resolve) => files.listen(filesPort, '127.0.0.1', resolve));

    const apps = await startApps({
      apps: ['monitoring', 'cost-analysis'],
      pg: pgc,
      redisUrl: redis.url,
      dir,
      logFile,
      env: {
        JWT_PUBLIC_KEY: testKeys.publicPem,
        OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1',
        // A killed worker's jobs are taken over once their lock lapses: 5 s here (30 s by default).
        // Not less: on a loaded 2-core machine a lock renewal (every half lock) can come late, and a
        // job whose lock lapses 4 times (maxStalledCount 3) is failed while its worker still runs it.
        WORKER_LOCK_DURATION_MS: '5000',
        WORKER_STALLED_INTERVAL_MS: '2000',
      },
    });
    sup = apps.sup;
    monitoring = apps.url.monitoring;
    cost = apps.url['cost-analysis'];
    token = await mintToken({ domainId: DOMAIN, workspaceId: WORKSPACE, roleType: 'WORKSPACE_OWNER', ttlSeconds: 3600 });
    process.stdout.write(`chaos: set up in ${Date.now() - startedAt} ms (private postgres :${pgc.port}, redis :${redis.port})\n`);
  }, 240_000);

  afterAll(async () => {
    stopping = true;
    await sup?.stop();
    files?.closeAllConnections();
    files?.close();
    await pgc?.destroy();
    await redis?.destroy();
    // CHAOS_KEEP=1 keeps the processes' log (and the rest of the run's directory) to look at.
    if (dir && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
    else if (dir) process.stdout.write(`chaos: the run's files are in ${dir}\n`);
  });

  const post = async (base: string, p: string, body: unknown) => {
    const res = await fetch(`${base}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  // What the run saw, checked by the tests after it.
  const outages: { what: string; from: number; to: number }[] = [];
  const samples: Sample[] = [];
  const accepted = new Set<string>();
  const abandoned = new Set<string>();
  const unexpected: { key: string; status: number; error?: string }[] = [];
  let refusedTotal = 0;
  let webhookId = '';
  let jobId = '';
  /** The one-shot senders' webhook and what each of their posts was answered (key → status; 0 = no answer). */
  let oneShotWebhookId = '';
  /** The two webhooks' access keys: no log line may hold them. */
  const accessKeys: string[] = [];
  const oneShot = new Map<string, number>();
  let oneShotWindowMs = 0;
  const jobStatusAtFaults: string[] = [];

  it('ingests and collects through every fault: 503 (never 500, never a hang) while a dependency is down, 200 after', async () => {
    const hook = await post(monitoring, '/monitoring/v1/webhook/create', { name: 'chaos', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: PROJECT });
    expect(hook.status).toBe(200);
    webhookId = hook.body.webhook_id;
    accessKeys.push(hook.body.access_key);
    const hookUrl = `${monitoring}${new URL(hook.body.webhook_url).pathname}`;
    const once = await post(monitoring, '/monitoring/v1/webhook/create', { name: 'chaos-one-shot', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: PROJECT });
    expect(once.status).toBe(200);
    oneShotWebhookId = once.body.webhook_id;
    accessKeys.push(once.body.access_key);
    const oneShotUrl = `${monitoring}${new URL(once.body.webhook_url).pathname}`;
    const ds = await post(cost, '/cost-analysis/v1/data-source/register', {
      name: 'chaos',
      resource_group: 'WORKSPACE',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: Array.from({ length: FILES }, (_, f) => `http://127.0.0.1:${(files.address() as { port: number }).port}/f${f}.csv`) } },
      // Only the sync below runs: a run crossing the default 16:00 UTC slot would add a scheduled job.
      schedule: { state: 'DISABLED' },
    });
    expect(ds.status).toBe(200);
    const job = await post(cost, '/cost-analysis/v1/data-source/sync', { data_source_id: ds.body.data_source_id });
    expect(job.body.total_tasks).toBe(FILES);
    jobId = job.body.job_id;

    // Senders, as monitoring systems: each posts its next event as soon as the last was taken; after
    // a 503 it posts the same event again, except every 4th refused event, which it drops.
    let next = 0;
    const send = async () => {
      while (!stopping) {
        const key = `k-${next++}`;
        for (;;) {
          let status = 0;
          let error: string | undefined;
          const at = Date.now();
          try {
            const res = await fetch(hookUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ event_key: key, title: `event ${key}` }),
              signal: AbortSignal.timeout(15_000),
            });
            await res.arrayBuffer();
            status = res.status;
          } catch (e) {
            error = (e as Error).message;
          }
          if (status === 200) {
            accepted.add(key);
            break;
          }
          if (status !== 503) {
            unexpected.push({ key, status, error });
            break;
          }
          samples.push({ at, what: 'monitoring webhook URL', status });
          refusedTotal++;
          if (refusedTotal % 4 === 0) {
            abandoned.add(key);
            break;
          }
          await sleep(50);
        }
        await sleep(10);
      }
    };
    const senders = Array.from({ length: 4 }, send);

    // Probes: /readyz and one operation of each API, every 200 ms.
    const probes: [string, () => Promise<number>][] = [
      ['monitoring /readyz', () => fetch(`${monitoring}/readyz`, { signal: AbortSignal.timeout(15_000) }).then((x) => x.status)],
      ['cost-analysis /readyz', () => fetch(`${cost}/readyz`, { signal: AbortSignal.timeout(15_000) }).then((x) => x.status)],
      ['monitoring webhook/get', () => post(monitoring, '/monitoring/v1/webhook/get', { webhook_id: webhookId }).then((x) => x.status)],
      ['cost-analysis job/get', () => post(cost, '/cost-analysis/v1/job/get', { job_id: jobId }).then((x) => x.status)],
    ];
    const probing = probes.map(async ([what, probe]) => {
      while (!stopping) {
        const at = Date.now();
        try {
          samples.push({ at, what, status: await probe() });
        } catch (e) {
          samples.push({ at, what, status: 0, error: (e as Error).message });
        }
        await sleep(200);
      }
    });

    const stored = async () =>
      (await pgc.query<{ n: number }>('platform_monitoring', `SELECT count(*)::int AS n FROM webhook_delivery WHERE outcome <> 'NOT_ACCEPTED'`)).at(0)!.n;
    const tasksDone = async () =>
      (await pgc.query<{ n: number }>('platform_cost_analysis', `SELECT count(*)::int AS n FROM job_task WHERE job_id = $1 AND status = 'SUCCESS'`, [jobId])).at(0)!.n;
    const jobStatus = async () => (await pgc.query<{ status: string }>('platform_cost_analysis', `SELECT status FROM job WHERE job_id = $1`, [jobId])).at(0)!.status;
    /** Both pipelines moved on: more deliveries stored, more cost tasks done. */
    const progress = async (what: string) => {
      const [s, t] = [await stored(), await tasksDone()];
      await waitFor(async () => (await stored()) >= s + 100 && (await tasksDone()) >= t + 1, 60_000, `progress after ${what}`, 200);
    };
    const ready = (what: string) =>
      waitFor(
        async () => (await Promise.all([monitoring, cost].map((b) => fetch(`${b}/readyz`).then((x) => x.status, () => 0)))).every((s) => s === 200),
        60_000,
        `both APIs ready after ${what}`,
        100,
      );
    const outage = async (what: string, down: () => Promise<unknown>, up: () => Promise<unknown>, holdMs = 1500) => {
      jobStatusAtFaults.push(await jobStatus());
      const from = Date.now();
      await down();
      await sleep(holdMs);
      const to = Date.now();
      await up();
      outages.push({ what, from, to });
      await ready(what);
      await progress(what);
    };

    await waitFor(async () => (await stored()) >= 200 && (await tasksDone()) >= 1, 60_000, 'ingestion and collection under way', 200);

    // 1. Both workers SIGKILLed mid-work; the supervisor starts them again.
    jobStatusAtFaults.push(await jobStatus());
    await Promise.all(['monitoring worker', 'cost-analysis worker'].map((l) => sup.killAndAwaitRestart(l)));
    await progress('the worker kills');
    // 2. Redis SIGKILLed, then started again from its append-only file.
    await outage('redis kill -9', () => redis.kill(), () => redis.start());
    // 3. PostgreSQL: `pg_ctl restart -m fast` (down a fraction of a second); a clean shutdown held
    // down 1.5 s; a crash (immediate: recovery at start) held down 20 s.
    jobStatusAtFaults.push(await jobStatus());
    pgc.restart('fast');
    await ready('postgres restart -m fast');
    await progress('postgres restart -m fast');
    await outage('postgres stop -m fast', async () => pgc.stop('fast'), async () => pgc.start());
    // The crash is a long outage: longer than a worker's retries of a failed job with backoff last
    // (cost-analysis: 5 attempts, 1 + 2 + 4 + 8 s), so no job may spend its attempts on it. Meanwhile,
    // from 1 s before it until PostgreSQL is back and both pipelines moved on, four more senders post
    // each of their events once, never again whatever the answer (many monitoring systems do not retry).
    let oneShotStopping = false;
    let oneShotNext = 0;
    const sendOnce = async () => {
      while (!oneShotStopping) {
        const key = `o-${oneShotNext++}`;
        oneShot.set(key, 0);
        try {
          const res = await fetch(oneShotUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ event_key: key, title: `event ${key}` }),
            signal: AbortSignal.timeout(15_000),
          });
          await res.arrayBuffer();
          oneShot.set(key, res.status);
        } catch {
          // no answer: not accepted (and counted so)
        }
      }
    };
    const oneShotFrom = Date.now();
    const oneShotSenders = Array.from({ length: 4 }, sendOnce);
    await sleep(1000);
    await outage('postgres stop -m immediate (20 s)', async () => pgc.stop('immediate'), async () => pgc.start(), LONG_OUTAGE_MS);
    oneShotStopping = true;
    await Promise.all(oneShotSenders);
    oneShotWindowMs = Date.now() - oneShotFrom;
    faultsDone = true;

    const acceptedAtEnd = accepted.size;
    await waitFor(() => accepted.size >= acceptedAtEnd + 100, 30_000, 'deliveries accepted after the faults');
    stopping = true;
    await Promise.all([...senders, ...probing]);
    process.stdout.write(
      `chaos: faults done after ${Date.now() - startedAt} ms; ${accepted.size} deliveries accepted, ${refusedTotal} answers 503, ${abandoned.size} dropped after a 503\n`,
    );

    expect(unexpected).toEqual([]);
    expect(samples.filter((s) => s.status !== 200 && s.status !== 503)).toEqual([]);
    // During each outage /readyz answered 503, and so did what needs the dependency that was down: an
    // operation reading Postgres during the Postgres outages, the webhook URL (it queues in Redis)
    // during the Redis outage. Operations that need only Postgres keep answering 200 while Redis is down.
    const missing: string[] = [];
    for (const o of outages) {
      const needs = o.what.startsWith('redis')
        ? ['monitoring /readyz', 'cost-analysis /readyz', 'monitoring webhook URL']
        : ['monitoring /readyz', 'cost-analysis /readyz', 'monitoring webhook/get', 'cost-analysis job/get'];
      for (const what of needs) {
        if (!samples.some((s) => s.what === what && s.status === 503 && s.at >= o.from && s.at <= o.to)) missing.push(`${what} during ${o.what}`);
      }
    }
    expect(missing).toEqual([]);
    for (const [what] of probes) expect({ what, last: samples.filter((s) => s.what === what).at(-1)?.status }).toEqual({ what, last: 200 });
    // The cost job was under way at every fault.
    expect(jobStatusAtFaults).toEqual(['IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS']);
  }, 300_000);

  it('webhook ingestion: every delivery answered 2xx is stored exactly once, none dropped after a 503 is', async () => {
    const storedCount = async () =>
      (await pgc.query<{ n: number }>('platform_monitoring', `SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1 AND outcome <> 'NOT_ACCEPTED'`, [webhookId])).at(0)!
        .n;
    await waitFor(async () => (await storedCount()) >= accepted.size, 60_000, 'every accepted delivery stored', 200);
    await sleep(3000); // jobs left active by the faults re-run once their lock lapses: they must add nothing
    const rows = await pgc.query<{ event_key: string; n: number }>('platform_monitoring', `SELECT event_key, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY event_key`, [
      webhookId,
    ]);
    const seen = new Map(rows.map((r) => [r.event_key, r.n]));
    expect(accepted.size).toBeGreaterThan(500);
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect([...accepted].filter((k) => !seen.has(k))).toEqual([]);
    expect([...abandoned].filter((k) => seen.has(k))).toEqual([]);
    expect(seen.size).toBe(accepted.size);
    expect(await storedCount()).toBe(accepted.size);
    const r = new Redis(redis.url);
    try {
      expect(await r.zcard('bull:monitoring-webhook-events:failed')).toBe(0);
      // The webhooks' copy the URL read while PostgreSQL was down: both webhooks, their keys as digests only.
      const copy = await r.hgetall('monitoring:webhooks');
      expect(Object.keys(copy).sort()).toEqual(['_', oneShotWebhookId, webhookId].sort());
      expect(Object.values(copy).filter((v) => accessKeys.some((k) => v.includes(k)))).toEqual([]);
    } finally {
      r.disconnect();
    }
  }, 120_000);

  it('webhook ingestion while PostgreSQL is down 20 s and Redis up: ≥ 99 % of one-shot posts accepted, none lost, none doubled', async () => {
    const acceptedKeys = [...oneShot].filter(([, status]) => status === 200).map(([key]) => key);
    const refused = [...oneShot].filter(([, status]) => status !== 200);
    const rows = await waitFor(
      async () => {
        const got = await pgc.query<{ event_key: string; n: number }>('platform_monitoring', `SELECT event_key, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY event_key`, [
          oneShotWebhookId,
        ]);
        return got.length >= acceptedKeys.length ? got : undefined;
      },
      60_000,
      'every accepted one-shot post stored',
      200,
    );
    const seen = new Map(rows.map((r) => [r.event_key, r.n]));
    const lost = acceptedKeys.filter((k) => !seen.has(k));
    const doubled = rows.filter((r) => r.n !== 1);
    const storedRefused = refused.filter(([k]) => seen.has(k));
    const share = acceptedKeys.length / oneShot.size;
    process.stdout.write(
      `chaos: postgres down ${LONG_OUTAGE_MS / 1000} s (redis up), one-shot posts over ${oneShotWindowMs} ms: ${oneShot.size} posted, ${acceptedKeys.length} accepted ` +
        `(${(share * 100).toFixed(2)} %), ${lost.length} lost, ${doubled.length} doubled, ${storedRefused.length} refused but stored; answers ` +
        `${JSON.stringify(Object.fromEntries([...new Set(oneShot.values())].map((st) => [st, [...oneShot.values()].filter((x) => x === st).length])))}\n`,
    );
    expect(oneShot.size).toBeGreaterThan(1000);
    expect(lost).toEqual([]);
    expect(doubled).toEqual([]);
    expect(storedRefused).toEqual([]);
    expect(seen.size).toBe(acceptedKeys.length);
    expect(share).toBeGreaterThanOrEqual(MIN_ACCEPTED_WHILE_POSTGRES_DOWN);
  }, 120_000);

  it('cost collection: the job ends SUCCESS and its rows are the CSV rows, each exactly once', async () => {
    const status = await waitFor(
      async () => {
        const j = await post(cost, '/cost-analysis/v1/job/get', { job_id: jobId });
        return j.status === 200 && j.body.status !== 'IN_PROGRESS' ? j.body.status : undefined;
      },
      120_000,
      'the cost job to finish',
      250,
    );
    expect(status).toBe('SUCCESS');
    const tasks = await pgc.query<{ status: string; created_count: number; n: number }>(
      'platform_cost_analysis',
      `SELECT status, created_count, count(*)::int AS n FROM job_task WHERE job_id = $1 GROUP BY 1, 2`,
      [jobId],
    );
    expect(tasks).toEqual([{ status: 'SUCCESS', created_count: ROWS, n: FILES }]);
    const got = await pgc.query<{ key: string; n: number; cents: string }>(
      'platform_cost_analysis',
      `SELECT billed_month || ' ' || currency AS key, count(*)::int AS n, round(sum(cost::numeric) * 100)::bigint AS cents
       FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.job_id = $1 GROUP BY 1 ORDER BY 1`,
      [jobId],
    );
    expect(got.map((g) => ({ key: g.key, n: g.n, cents: Number(g.cents) }))).toEqual(expectedCosts());
    const dupes = await pgc.query('platform_cost_analysis', `SELECT usage_type FROM cost GROUP BY usage_type HAVING count(*) > 1 LIMIT 5`);
    expect(dupes).toEqual([]);
    expect((await pgc.query<{ n: number }>('platform_cost_analysis', `SELECT count(*)::int AS n FROM cost`)).at(0)!.n).toBe(FILES * ROWS);
    const refetched = [...fileRequests.values()].filter((n) => n > 1).length;
    process.stdout.write(`chaos: cost job ${status}; ${refetched} of ${FILES} files fetched more than once (tasks re-run after a fault)\n`);
  }, 180_000);

  it('no process died by itself: the APIs kept their pids, each worker exited once, when it was killed', () => {
    const log = readFileSync(logFile, 'utf8');
    for (const api of ['monitoring', 'cost-analysis']) {
      expect({ api, pids: sup.pids(api).length, exits: sup.exits(api) }).toEqual({ api, pids: 1, exits: [] });
    }
    for (const worker of ['monitoring worker', 'cost-analysis worker']) {
      expect({ worker, pids: sup.pids(worker).length }).toEqual({ worker, pids: 2 });
      expect(sup.exits(worker)).toEqual([`[start] ${worker} exited (signal SIGKILL); restarting in 0.5 s (restart #1)`]);
    }
    // The faults were seen, and logged as connection errors, not as crashes.
    expect(log).toMatch(/postgres connection error|terminating connection/);
    expect(log).not.toMatch(/Unhandled|uncaught/i);
    // Nor did any line hold an access key (the URL carries it; the copy in Redis keeps only its digest).
    expect(accessKeys.length).toBe(2);
    expect(accessKeys.filter((k) => log.includes(k))).toEqual([]);
    process.stdout.write(`chaos: total ${Date.now() - startedAt} ms\n`);
  });
});
