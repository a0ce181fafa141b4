import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { createTestRedis, waitFor } from '@platform/testing';
import { createQueue, createQueueConnection, createWorker, deadLetters, fairShareKey, gracefulShutdown } from './index';

const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

describe('queue', () => {
  const r = createTestRedis('queue');
  const prefix = r.prefix.replace(/:$/, '');
  const connection = createQueueConnection(redisUrl);
  afterAll(async () => {
    await connection.quit();
    await r.cleanup();
  });

  it('processes jobs, retries failures with backoff and keeps exhausted ones as dead letters', async () => {
    const queue = createQueue<{ n: number }>('retry', { connection, prefix });
    const seen: number[] = [];
    const worker = createWorker<{ n: number }>(
      'retry',
      async (job) => {
        seen.push(job.attemptsMade);
        if (job.data.n === 2) throw new Error('always fails');
        if (job.attemptsMade < 1) throw new Error('fails once');
        return job.data.n * 10;
      },
      { connection, prefix },
    );
    const done = new Promise<void>((resolve) => {
      let finished = 0;
      const tick = () => ++finished === 2 && resolve();
      worker.on('completed', tick);
      worker.on('failed', (job) => job && job.attemptsMade >= 2 && tick());
    });
    await queue.add('ok', { n: 1 }, { backoff: { type: 'fixed', delay: 50 } });
    await queue.add('bad', { n: 2 }, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await done;
    const dead = await deadLetters(queue);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ name: 'bad', failedReason: 'always fails', attemptsMade: 2 });
    await gracefulShutdown({ workers: [worker], queues: [queue] })();
  });

  it('a job failing while its dependency is down goes back to the queue without spending its attempts', async () => {
    const queue = createQueue<{ n: number }>('outage', { connection, prefix });
    let down = true;
    const runs: boolean[] = [];
    const failed: string[] = [];
    const worker = createWorker<{ n: number }>(
      'outage',
      async (job) => {
        runs.push(down);
        if (down || job.data.n === 2) throw new Error('connect ECONNREFUSED');
        return job.data.n;
      },
      { connection, prefix, dependencies: async () => (down ? Promise.reject(new Error('down')) : 1) },
      { concurrency: 2 },
    );
    worker.on('failed', (job) => job && failed.push(`${job.data.n}:${job.attemptsMade}`));
    const completed = new Promise<{ n: number; attemptsMade: number }>((resolve) => worker.on('completed', (j) => resolve({ n: j.data.n, attemptsMade: j.attemptsMade })));
    // Two attempts 50 ms apart: spent in no time if the outage counted against them.
    await queue.add('n', { n: 1 }, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await waitFor(() => runs.length >= 3, 10_000, 'runs during the outage');
    expect(failed).toEqual([]);
    down = false;
    expect(await completed).toEqual({ n: 1, attemptsMade: 1 }); // the run that succeeded, and no other
    expect(failed).toEqual([]);
    // A job that fails while its dependencies are up spends its attempts as usual.
    await queue.add('n', { n: 2 }, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await waitFor(() => failed.includes('2:2'), 10_000, 'the failing job to fail for good');
    await gracefulShutdown({ workers: [worker], queues: [queue] })();
  });

  it('a job survives a worker process killed mid-job and is completed once by another worker', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'queue-fixture-'));
    const outfile = path.join(dir, 'worker.js');
    buildSync({
      entryPoints: [path.join(__dirname, 'kill-worker.fixture.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile,
      packages: 'external',
      nodePaths: [path.resolve(__dirname, '../../../node_modules')],
      logLevel: 'error',
    });
    const queue = createQueue<{ id: string }>('crash', { connection, prefix });
    const job = await queue.add('work', { id: 'j1' });

    const child = spawn(process.execPath, [outfile], {
      env: { ...process.env, REDIS_URL: redisUrl, QUEUE_NAME: 'crash', QUEUE_PREFIX: prefix, NODE_PATH: path.resolve(__dirname, '../../../node_modules') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes(`started ${job.id}`) && resolve());
      child.on('exit', (code) => reject(new Error(`fixture worker exited early (${code})`)));
    });
    expect(await queue.getJobState(job.id!)).toBe('active');
    child.removeAllListeners('exit');
    child.kill('SIGKILL');

    // A second worker picks the stalled job up once its lock lapses.
    const runs: string[] = [];
    const worker = createWorker<{ id: string }>(
      'crash',
      async (j) => {
        runs.push(j.data.id);
        return 'done';
      },
      { connection, prefix },
      { lockDuration: 1500, stalledInterval: 500 },
    );
    const completed = await new Promise<string>((resolve) => worker.on('completed', (j) => resolve(j.id!)));
    expect(completed).toBe(job.id);
    expect(runs).toEqual(['j1']);
    expect(await queue.getJobState(job.id!)).toBe('completed');
    await worker.close();
    await queue.close();
  }, 30_000);

  // issue #32: one group (tenant) cannot hold every slot of the queue's workers
  it('fair share: a group past its slots waits, without spending an attempt, while another group runs', async () => {
    const queue = createQueue<{ group: string; n: number }>('fair', { connection, prefix });
    const order: string[] = [];
    const release: (() => void)[] = [];
    const worker = createWorker<{ group: string; n: number }>(
      'fair',
      async (job) => {
        order.push(`${job.data.group}${job.data.n}:start`);
        if (job.data.group === 'a') await new Promise<void>((resolve) => release.push(resolve));
        order.push(`${job.data.group}${job.data.n}:end`);
        return job.attemptsMade;
      },
      { connection, prefix, fairShare: { group: (job) => job.data.group, slots: 1, leaseMs: 2000, retryDelayMs: 50 } },
      { concurrency: 2 },
    );
    const attempts: Record<string, number> = {};
    worker.on('completed', (job, r) => (attempts[`${job.data.group}${job.data.n}`] = r as number));
    await queue.add('a', { group: 'a', n: 1 }, { attempts: 1 });
    await queue.add('a', { group: 'a', n: 2 }, { attempts: 1 });
    await queue.add('a', { group: 'a', n: 3 }, { attempts: 1 });
    await waitFor(() => order.includes('a1:start'), 10_000, 'a1 to start');
    await queue.add('b', { group: 'b', n: 1 }, { attempts: 1 });
    // b1 runs to its end while a1 holds group a's one slot, and a2, a3 have not started.
    await waitFor(() => order.includes('b1:end'), 10_000, 'b1 to finish beside a1');
    expect(order.filter((e) => e.startsWith('a'))).toEqual(['a1:start']);
    // Each later a job runs once a1 gives the slot back, one at a time, with no attempt spent on waiting.
    for (let i = 1; i <= 3; i++) {
      await waitFor(() => release.length >= i, 10_000, `a${i} to start`);
      expect(order.filter((e) => e.startsWith('a') && e.endsWith(':start'))).toHaveLength(i);
      release[i - 1]();
    }
    await waitFor(() => Object.keys(attempts).length === 4, 10_000, 'every job to complete');
    expect(attempts).toEqual({ a1: 0, a2: 0, a3: 0, b1: 0 });
    await gracefulShutdown({ workers: [worker], queues: [queue] })();
  });

  it('fair share: the slot of a job whose worker died lapses with its lease, and a job may take its own slot again', async () => {
    const other = createQueueConnection(redisUrl);
    const key = fairShareKey(prefix, 'fair-crash', 'a');
    // A dead worker's slot: a lease that ends in 300 ms and is never renewed.
    await other.zadd(key, Date.now() + 300, 'dead-job');
    const queue = createQueue<{ group: string }>('fair-crash', { connection, prefix });
    const ran: string[] = [];
    const worker = createWorker<{ group: string }>('fair-crash', async (job) => void ran.push(String(job.id)), {
      connection,
      prefix,
      fairShare: { group: (job) => job.data.group, slots: 1, leaseMs: 2000, retryDelayMs: 50 },
    });
    await queue.add('a', { group: 'a' }, { jobId: 'live-job' });
    await waitFor(() => ran.includes('live-job'), 10_000, 'the job to run once the dead lease lapsed');
    expect(await other.zcard(key)).toBe(0); // released at its end
    // A job that holds the slot (its own retry after a crash) takes it again although the group is full.
    await other.zadd(key, Date.now() + 60_000, 'again');
    await queue.add('a', { group: 'a' }, { jobId: 'again' });
    await waitFor(() => ran.includes('again'), 10_000, 'the job holding the slot to run');
    await gracefulShutdown({ workers: [worker], queues: [queue], connections: [other] })();
  });

  it('fair share: workers racing for a group\'s last slot never run more than its share at once', async () => {
    const queue = createQueue<{ group: string; n: number }>('fair-race', { connection, prefix });
    const connections = [createQueueConnection(redisUrl), createQueueConnection(redisUrl)];
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const workers = connections.map((c) =>
      createWorker<{ group: string; n: number }>(
        'fair-race',
        async (job) => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
          done.push(job.data.n);
        },
        { connection: c, prefix, fairShare: { group: (job) => job.data.group, slots: 2, leaseMs: 5000, retryDelayMs: 10 } },
        { concurrency: 4 },
      ),
    );
    await queue.addBulk(Array.from({ length: 24 }, (_, n) => ({ name: 'a', data: { group: 'a', n } })));
    await waitFor(() => done.length === 24, 30_000, 'every job');
    expect(most).toBe(2); // 8 slots between the two workers; group a never held more than its 2
    await gracefulShutdown({ workers, queues: [queue], connections });
  });
});
