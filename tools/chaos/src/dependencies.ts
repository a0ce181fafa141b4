// A PostgreSQL cluster and a Redis of the chaos test's own, which it may kill and restart: the shared
// ones on 5432 / 6379 are never touched. The PostgreSQL cluster is libs/testing's private-postgres.ts
// (shared with the read replica tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { freePort } from '@platform/testing';

export { freePort, startPrivatePostgres, type PrivatePostgres } from '@platform/testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = (c: ChildProcess | undefined) => !!c && c.exitCode === null && c.signalCode === null;

/**
 * A redis-server persisted as production must run it (append-only file, fsync on every write, no
 * snapshots). `kill()` SIGKILLs it; `start()` starts it again on the same port and dir, from its AOF
 * (or, with `empty`, from nothing).
 */
export async function startPrivateRedis() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined;
  /** `empty`: start from nothing, as a Redis without persistence comes back. */
  const start = async (o: { empty?: boolean } = {}) => {
    if (o.empty) for (const f of readdirSync(dir)) rmSync(path.join(dir, f), { recursive: true, force: true });
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no'], {
      stdio: 'ignore',
    });
    for (let i = 0; ; i++) {
      if (!running(proc)) throw new Error(`redis-server exited (${proc.exitCode})`);
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {});
      try {
        await probe.connect();
        // While it loads the AOF Redis answers LOADING: wait for a real PONG.
        if ((await probe.ping()) === 'PONG') return;
      } catch (e) {
        if (i > 400) throw e;
      } finally {
        probe.disconnect();
      }
      await sleep(25);
    }
  };
  const kill = async () => {
    if (!running(proc)) return;
    const exited = new Promise((r) => proc!.once('exit', r));
    proc!.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    port,
    start,
    kill,
    async destroy() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type PrivateRedis = Awaited<ReturnType<typeof startPrivateRedis>>;
