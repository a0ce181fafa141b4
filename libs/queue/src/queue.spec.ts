import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { createTestRedis, waitFor } from '@platform/testing';
import { createQueue, createQueueConnection, createWorker, deadLetters, gracefulShutdown } from './index';

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
});
