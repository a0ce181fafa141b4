// A PostgreSQL cluster of a test's own (initdb + pg_ctl in a temporary directory), which the test may
// stop, crash, restart or replicate: the shared cluster on 5432 is never touched. Used by the chaos
// tests (tools/chaos) and the read replica tests (libs/db).
import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** PostgreSQL's server binaries (initdb, pg_ctl, pg_basebackup): PG_BIN, or the newest Debian install. */
const PG_BIN =
  process.env.PG_BIN ||
  path.join(
    '/usr/lib/postgresql',
    (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : []).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a))[0] ?? '15',
    'bin',
  );
/** The port range private servers listen on. */
const PORTS = { from: 32_000, to: 32_999 };

/** A port in the private range that nothing listens on now. */
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

const asRoot = () => process.getuid?.() === 0;

/** A temporary directory the server's user owns (initdb refuses root: as root, every command runs as `postgres`). */
function serverDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (asRoot()) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  return dir;
}

function pgRunner(dir: string) {
  return (bin: string, args: string[]) => {
    const [cmd, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args]] : [path.join(PG_BIN, bin), args];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
}

/** The controls of one private server (a primary or a standby). */
function controls(dir: string, data: string, port: number) {
  const pgRun = pgRunner(dir);
  const ctl = (...args: string[]) => pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'postgres.log'), '-w', '-t', '60', ...args]);
  const url = (database: string) => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    dir,
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

/** The settings every private server starts with: in postgresql.conf, so a restart can never try another port. */
const serverConf = (port: number, dir: string) =>
  [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`, 'max_connections = 100', 'shared_buffers = 32MB', 'fsync = on', 'synchronous_commit = on'].join('\n') + '\n';

/**
 * A PostgreSQL cluster in a temporary directory (initdb + pg_ctl), trust auth for `postgres` on
 * 127.0.0.1:<port> (replication connections too), fsync on (a crash must lose no committed
 * transaction), `wal_level = replica` (a standby can be made of it: startStandby).
 */
export async function startPrivatePostgres(options: { prefix?: string } = {}) {
  const port = await freePort();
  const dir = serverDir(options.prefix ?? 'chaos-pg-');
  const data = path.join(dir, 'data');
  pgRunner(dir)('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  appendFileSync(path.join(data, 'postgresql.conf'), serverConf(port, dir) + 'wal_level = replica\nmax_wal_senders = 5\n');
  const c = controls(dir, data, port);
  c.start();
  return c;
}
export type PrivatePostgres = Awaited<ReturnType<typeof startPrivatePostgres>>;

/**
 * A hot standby of `primary`, streaming from it: `pg_basebackup -R --checkpoint=fast` (which writes standby.signal and
 * primary_conninfo) into a temporary directory, started on a port of its own. `pauseReplay()` /
 * `resumeReplay()` stop and restart WAL replay (the standby keeps receiving, its data stands still).
 */
export async function startStandby(primary: Pick<PrivatePostgres, 'port'>, options: { prefix?: string } = {}) {
  const port = await freePort();
  const dir = serverDir(options.prefix ?? 'standby-pg-');
  const data = path.join(dir, 'data');
  pgRunner(dir)('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']);
  appendFileSync(path.join(data, 'postgresql.conf'), serverConf(port, dir) + 'hot_standby = on\n');
  const c = controls(dir, data, port);
  c.start();
  return {
    ...c,
    pauseReplay: () => c.query('postgres', 'SELECT pg_wal_replay_pause()'),
    resumeReplay: () => c.query('postgres', 'SELECT pg_wal_replay_resume()'),
  };
}
export type PrivateStandby = Awaited<ReturnType<typeof startStandby>>;
