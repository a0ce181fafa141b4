// A PostgreSQL cluster and a Redis of the chaos test's own, which it may kill and restart: the shared
// ones on 5432 / 6379 are never touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import pg from 'pg';

/** PostgreSQL's server binaries (initdb, pg_ctl): PG_BIN, or the newest Debian install. */
const PG_BIN =
  process.env.PG_BIN ||
  path.join(
    '/usr/lib/postgresql',
    (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : []).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))[0] ?? '15',
    'bin',
  );
/** The port range this test may listen on. */
const PORTS = { from: 32_000, to: 32_999 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port in the test's range that nothing listens on now. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from + 1));
    const ok = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (ok) return port;
  }
  throw new Error(`no free port in ${PORTS.from}-${PORTS.to}`);
}

const running = (c: ChildProcess | undefined) => !!c && c.exitCode === null && c.signalCode === null;

/**
 * A PostgreSQL 15 cluster in a temporary directory (initdb + pg_ctl), trust auth for `postgres` on
 * 127.0.0.1:<port>, fsync on (a crash must lose no committed transaction). initdb refuses root: as
 * root, every command runs as the `postgres` user (runuser).
 */
export async function startPrivatePostgres() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const pgRun = (bin: string, args: string[]) => {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args]] : [path.join(PG_BIN, bin), args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  // In postgresql.conf, not on pg_ctl's command line: every start (and restart) uses them, so the
  // cluster can never try the shared cluster's port.
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'max_connections = 100',
      'shared_buffers = 32MB',
      'fsync = on',
      'synchronous_commit = on',
    ].join('\n') + '\n',
  );
  const ctl = (...args: string[]) => pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'postgres.log'), '-w', '-t', '60', ...args]);
  ctl('start');
  const url = (database: string) => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    /** `pg_ctl restart -m <mode>`: fast (clean shutdown) or immediate (a crash: recovery at start). */
    restart: (mode: 'fast' | 'immediate') => ctl('-m', mode, 'restart'),
    stop: (mode: 'fast' | 'immediate') => ctl('-m', mode, 'stop'),
    start: () => ctl('start'),
    async query<T extends pg.QueryResultRow = pg.QueryResultRow>(database: string, sql: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: url(database) });
      client.on('error', () => {});
      await client.connect();
      try {
        return (await client.query<T>(sql, values)).rows;
      } finally {
        await client.end().catch(() => {});
      }
    },
    async destroy() {
      try {
        ctl('-m', 'immediate', 'stop');
      } catch {
        // already down
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
export type PrivatePostgres = Awaited<ReturnType<typeof startPrivatePostgres>>;

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
