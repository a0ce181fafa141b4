// Test support for the crash and restart tests: the worker bundled and run as its own process, and a
// private redis-server (AOF, fsync always) that a test may SIGKILL and restart on the same port and dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { bundleEntry } from '@platform/testing';

const ROOT = path.resolve(__dirname, '../../../..');

/** src/worker.ts bundled the way the build bundles it, to run as its own process. */
export function buildWorker(): string {
  return buildEntry('worker');
}

/** src/<entry>.ts (`worker`, `main`) bundled the way the build bundles it, to run as its own process. */
export function buildEntry(entry: 'worker' | 'main'): string {
  return bundleEntry(path.join(__dirname, `../${entry}.ts`), path.join(mkdtempSync(path.join(os.tmpdir(), `monitoring-${entry}-`)), `${entry}.js`));
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** Starts the bundled worker with these settings; resolves once it reports ready. */
export async function startWorkerProcess(workerFile: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [workerFile], {
    env: { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules'), LOG_LEVEL: 'error', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('worker ready') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
  });
  child.removeAllListeners('exit');
  return child;
}

export async function killProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A redis-server of the test's own, persisted as production must be (append-only file, fsync on
 * every write, no RDB snapshots), on a free port and a temporary dir. `kill()` SIGKILLs it;
 * `start()` starts it again on the same port and dir (it reloads the AOF).
 */
export async function startPrivateRedis() {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'monitoring-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined;

  const start = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no'], {
      stdio: 'ignore',
    });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      for (let i = 0; ; i++) {
        if (!running(proc)) throw new Error(`redis-server exited (${proc.exitCode})`);
        try {
          await probe.connect();
          // While it loads the AOF Redis answers LOADING: wait for a real PONG.
          if ((await probe.ping()) === 'PONG') return;
        } catch (e) {
          if (i > 200) throw e;
        }
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      probe.disconnect();
    }
  };
  await start();
  return {
    url,
    port,
    dir,
    start,
    kill: async () => proc && killProcess(proc),
    async stop() {
      if (proc) await killProcess(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivateRedis = Awaited<ReturnType<typeof startPrivateRedis>>;

/**
 * A TCP proxy to `target` (host:port) that a test can cut: `cut()` closes its listener (new
 * connections are refused, as by a stopped server) and resets every open connection (as a server
 * that went away); `restore()` listens again on the same port. Used to take PostgreSQL away from an
 * app while the test keeps its own direct connection.
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    /** The URL with its host and port replaced by the proxy's. */
    via(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async cut() {
      const closed = new Promise((r) => server.close(r));
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
      await closed;
    },
    restore: () => listen(port),
    async stop() {
      if (server.listening) await this.cut();
    },
  };
}
