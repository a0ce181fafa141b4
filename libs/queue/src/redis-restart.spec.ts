import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@platform/testing';
import { createProducerConnection, createQueue, createQueueConnection, createRedis, createWorker, fairShareKey } from './index';

/**
 * The clients of this lib through a Redis restart, on a redis-server of the test's own (SIGKILLed and
 * started again on the same port): their errors are logged (message and code, never the URL, the same
 * message once), none reaches the process, and each works again once Redis is back, by itself.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  for (;;) {
    const port = 32_000 + Math.floor(Math.random() * 1000);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

interface Line {
  level: 'warn' | 'info';
  obj: Record<string, unknown>;
  msg: string;
}
const capture = () => {
  const lines: Line[] = [];
  return { lines, logger: { warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj: obj as Line['obj'], msg }), info: (obj: object, msg: string) => lines.push({ level: 'info', obj: obj as Line['obj'], msg }) } };
};

describe('Redis clients through a Redis restart', () => {
  let port: number;
  let dir: string;
  let server: ChildProcess | undefined;
  // A password in the URL: it must never reach a log line.
  let url: string;

  const start = async () => {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--requirepass', 's3cret-pw'], {
      stdio: 'ignore',
    });
    // A raw PING (no client library: a probe must leave nothing behind); LOADING until the AOF is read.
    const ping = () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write('AUTH s3cret-pw\r\nPING\r\n'));
        let reply = '';
        socket.on('data', (d) => {
          reply += d.toString();
          if (reply.split('\r\n').length > 2) socket.destroy();
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve(reply === '+OK\r\n+PONG\r\n'));
      });
    await waitFor(ping, 10_000, 'redis-server', 25);
  };
  const kill = async () => {
    const s = server!;
    const gone = new Promise((r) => s.once('exit', r));
    s.kill('SIGKILL');
    await gone;
  };

  beforeAll(async () => {
    port = await freePort();
    dir = mkdtempSync(path.join(os.tmpdir(), 'queue-redis-'));
    url = `redis://:s3cret-pw@127.0.0.1:${port}`;
    await start();
  });
  afterAll(async () => {
    if (server && server.exitCode === null) await kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every client logs the outage once, recovers by itself, and the queue and worker carry on', async () => {
    const log = capture();
    const redis = createRedis(url, { logger: log.logger });
    const producer = createProducerConnection(url, { logger: log.logger });
    const connection = createQueueConnection(url, { logger: log.logger });
    const queue = createQueue<{ n: number }>('restart', { connection: producer, prefix: 'restart-test', logger: log.logger });
    const done: number[] = [];
    const worker = createWorker<{ n: number }>('restart', async (job) => void done.push(job.data.n), { connection, prefix: 'restart-test', logger: log.logger }, { concurrency: 1 });
    try {
      await waitFor(() => redis.status === 'ready' && producer.status === 'ready', 10_000, 'clients ready');
      await queue.add('n', { n: 1 });
      await waitFor(() => done.includes(1), 10_000, 'the first job');

      await kill();
      await sleep(1500); // every client retries several times meanwhile
      // While Redis is down the request-path clients fail at once instead of waiting for it.
      await expect(redis.get('k')).rejects.toThrow();
      await expect(queue.add('n', { n: 2 })).rejects.toThrow();
      await start();

      await waitFor(() => redis.status === 'ready' && producer.status === 'ready' && connection.status === 'ready', 20_000, 'clients reconnected');
      expect(await redis.set('k', 'v')).toBe('OK');
      await queue.add('n', { n: 3 });
      await waitFor(() => done.includes(3), 20_000, 'a job after the restart');

      const warns = log.lines.filter((l) => l.level === 'warn');
      const said = new Set(warns.map((l) => l.msg));
      // Each client logged its errors under its own name.
      for (const what of ['redis error', 'queue redis error', 'queue restart error', 'worker restart error']) expect(said).toContain(what);
      // ...the refused connection at most once per client, however often it was retried.
      const refused = warns.filter((l) => l.msg === 'redis error' && /ECONNREFUSED/.test(String(l.obj.err)));
      expect(refused).toHaveLength(1);
      expect(refused[0].obj).toMatchObject({ code: 'ECONNREFUSED' });
      // ...and said when it was back.
      expect(log.lines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual(expect.arrayContaining(['redis reconnected', 'queue redis reconnected']));
      expect(JSON.stringify(log.lines)).not.toContain('s3cret-pw');
    } finally {
      await worker.close().catch(() => {});
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close().catch(() => {});
      for (const c of [redis, producer, connection]) await c.quit().catch(() => c.disconnect());
    }
  }, 60_000);

  // issue #32: a domain's fair share of slots holds through a Redis restart, and no slot is left taken
  it('fair share: a slot held across a Redis restart still keeps the group to its share, and is given back', async () => {
    const connection = createQueueConnection(url);
    const queue = createQueue<{ group: string; n: number }>('fair-restart', { connection, prefix: 'restart-test' });
    const started: string[] = [];
    const release: Record<string, () => void> = {};
    const worker = createWorker<{ group: string; n: number }>(
      'fair-restart',
      async (job) => {
        const id = `${job.data.group}${job.data.n}`;
        started.push(id);
        if (id === 'a1') await new Promise<void>((resolve) => (release[id] = resolve));
      },
      { connection, prefix: 'restart-test', fairShare: { group: (job) => job.data.group, slots: 1, leaseMs: 3000, retryDelayMs: 50 } },
      { concurrency: 2, lockDuration: 3000, stalledInterval: 1000 },
    );
    try {
      await queue.add('a', { group: 'a', n: 1 });
      await waitFor(() => started.includes('a1'), 10_000, 'a1 to start');
      await kill();
      await sleep(500);
      await start();
      await waitFor(() => connection.status === 'ready', 20_000, 'the connection back');
      await queue.add('a', { group: 'a', n: 2 });
      await queue.add('b', { group: 'b', n: 1 });
      await waitFor(() => started.includes('b1'), 20_000, 'b1 beside a1');
      await sleep(500);
      expect(started).not.toContain('a2'); // a1 still holds group a's one slot
      release.a1();
      await waitFor(() => started.includes('a2'), 20_000, 'a2 once a1 gave its slot back');
      await waitFor(async () => (await connection.exists(fairShareKey('restart-test', 'fair-restart', 'a'))) === 0, 10_000, 'no slot left taken');
    } finally {
      await worker.close().catch(() => {});
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close().catch(() => {});
      await connection.quit().catch(() => connection.disconnect());
    }
  }, 60_000);
});
