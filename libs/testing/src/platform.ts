import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { TokenSigner } from '@platform/auth';
import { createTempDatabase, type TempDatabase } from './database';
import { mintToken, type MintOptions } from './tokens';
import { waitFor } from './wait';

const root = path.resolve(__dirname, '../../..');
type ModuleEntry = { port: number; worker: boolean; nodeOptions?: string };
const modules = JSON.parse(readFileSync(path.join(root, 'config/modules.json'), 'utf8')) as Record<string, ModuleEntry>;

/** Every app of the route table that has an entry point. */
export const PLATFORM_APPS = Object.keys(modules).filter((m) => existsSync(path.join(root, 'apps', m, 'src/main.ts')));

export interface PlatformOptions {
  /** Added to every app's standard port (config/modules.json), so a running `npm start` is left alone. */
  portOffset: number;
  /** The Redis database of this run; it is flushed at start and at stop, so it must be this run's alone. */
  redisUrl: string;
  /** Real nginx with the generated gateway config in front, on this port; none when absent. */
  gatewayPort?: number;
  /** Which apps (default: every app). */
  apps?: string[];
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** Build the apps first with the production build (default true). */
  build?: boolean;
  /** Prefix of the temp directory (keys, logs). */
  label?: string;
  /**
   * Processes of every app and every worker (default 1): replica `i` of an app listens on its port +
   * `REPLICA_PORT_STRIDE` × i, and nginx balances over them (round robin), as `START_REPLICAS` does for
   * `npm start`.
   */
  replicas?: number;
}

/** Replica `i` of an app listens on the app's port + this × i (config/modules.json's ports are consecutive). */
export const REPLICA_PORT_STRIDE = 10;

/** One process of the platform: an app's API or its worker. */
export interface PlatformProcess {
  label: string;
  app: string;
  kind: 'api' | 'worker';
  /** 0 for the first replica. */
  replica: number;
  /** The running child; replaced by `restart`. */
  child: ChildProcess;
  /** Exit code or signal of the last exit, while it is down. */
  exited?: { code: number | null; signal: NodeJS.Signals | null };
}

export interface Platform {
  /** The gateway's URL when nginx runs, else PUBLIC_BASE_URL as the apps were told. */
  base: string;
  apps: string[];
  dir: string;
  env: Record<string, string>;
  /** The port of the app's first replica (of replica `i` with the second argument). */
  portOf: (app: string, replica?: number) => number;
  /** `http://127.0.0.1:<port>` of the app itself (no gateway): its first replica, or replica `i`. */
  urlOf: (app: string, replica?: number) => string;
  /** How many processes each app and worker runs. */
  replicas: number;
  dbUrl: (app: string) => string;
  processes: PlatformProcess[];
  /** Starts the processes of `app` again (those that exited) and waits until the API is ready. */
  restart: (app: string) => Promise<void>;
  /** An access token signed with this platform's key (the apps accept it as identity's). */
  mintToken: (o?: MintOptions) => Promise<string>;
  admin: (...args: string[]) => unknown;
  stop(): Promise<void>;
  /** The whole log of the run (every process's output, each line prefixed with its label). */
  logs(): string;
  /** A position in the output, for `outputSince`. */
  outputMark(): number;
  /** What processes printed since `mark` (of one label's process when given), from memory. */
  outputSince(mark: number, label?: string): string;
}

/**
 * Until `url` answers 2xx, while `alive()` holds: a process that exited (a port already taken, say)
 * fails at once instead of letting whatever else listens on its port answer for it.
 */
const ready = (url: string, label: string, alive: () => string | undefined = () => undefined, ms = 30_000) =>
  waitFor(
    () => {
      const dead = alive();
      if (dead) throw new Error(`${label}: ${dead}`);
      return fetch(url).then((r) => r.ok, () => false);
    },
    ms,
    label,
    200,
  );

/** Fails when something already listens on `port` (an app started there would die, and the other answer for it). */
async function assertPortFree(port: number, label: string) {
  await new Promise<void>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new Error(e.code === 'EADDRINUSE' ? `port ${port} (${label}) is already in use: is another platform still running?` : `port ${port} (${label}): ${e.message}`)),
    );
    server.listen(port, () => server.close(() => resolve()));
  });
}

/** Builds each app with the production build (tools/build/build-app.mjs) into dist/apps/<app>/. */
export function buildApps(apps: string[] = PLATFORM_APPS) {
  for (const app of apps) {
    const r = spawnSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), app], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build of ${app} failed: ${r.stderr}`);
  }
}

/**
 * The platform as it runs in production, on this machine: every app built with the production build,
 * its own fresh database, one Redis database of this run's own, the workers, and (with `gatewayPort`)
 * real nginx with the generated gateway config in front.
 */
export async function startPlatform(o: PlatformOptions): Promise<Platform> {
  const apps = o.apps ?? PLATFORM_APPS;
  const replicas = o.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1 || replicas >= REPLICA_PORT_STRIDE) throw new Error(`replicas must be 1 to ${REPLICA_PORT_STRIDE - 1}`);
  const portOf = (m: string, replica = 0) => modules[m].port + o.portOffset + REPLICA_PORT_STRIDE * replica;
  const replicaList = [...Array(replicas).keys()];
  for (const app of apps) for (const i of replicaList) await assertPortFree(portOf(app, i), i ? `${app}#${i + 1}` : app);
  if (o.gatewayPort) await assertPortFree(o.gatewayPort, 'gateway');
  // Checked before any process starts: a launcher that throws later must not leave apps running.
  const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (o.gatewayPort && !nginxBin) throw new Error('nginx is not installed (apt-get install nginx-light); .ci/run installs it');
  const dir = mkdtempSync(path.join(os.tmpdir(), `${o.label ?? 'platform'}-`));
  if (o.build !== false) buildApps(apps);
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 2 });
  redis.on('error', () => {});
  await redis.flushdb();
  const dbs: Record<string, TempDatabase> = {};
  for (const app of apps) dbs[app] = await createTempDatabase({ app });

  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeFileSync(path.join(dir, 'private.pem'), privatePem);
  writeFileSync(path.join(dir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const signer = new TokenSigner(createPrivateKey(privatePem));
  const base = `http://127.0.0.1:${o.gatewayPort ?? 8080 + o.portOffset}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    REDIS_URL: o.redisUrl,
    PUBLIC_BASE_URL: base,
    JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem'),
    JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'),
    BOOTSTRAP_PASSWORD: 'e2e-admin-password',
    LOG_LEVEL: 'warn',
    LOG_SYNC: 'true',
    ...o.env,
  };
  delete env.JEST_WORKER_ID;
  const log = createWriteStream(path.join(dir, 'platform.log'));
  // The recent output also stays in memory (bounded), so a caller can see what one request made a process print.
  const recent: { seq: number; label: string; text: string }[] = [];
  let seq = 0;
  const output = (label: string, d: Buffer | string) => {
    log.write(`[${label}] ${d}`);
    recent.push({ seq: ++seq, label, text: String(d) });
    if (recent.length > 5000) recent.splice(0, recent.length - 4000);
  };
  const processes: PlatformProcess[] = [];
  let stopping = false;
  const spawnProcess = (p: Omit<PlatformProcess, 'child'> & { child?: ChildProcess }, file: string, appEnv: Record<string, string>) => {
    const child = spawn(process.execPath, ['--enable-source-maps', file], { cwd: root, env: { ...env, ...appEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => output(p.label, d));
    child.stderr!.on('data', (d) => output(p.label, d));
    p.child = child;
    delete p.exited;
    child.once('exit', (code, signal) => {
      if (p.child !== child) return;
      p.exited = { code, signal };
      if (!stopping) output(p.label, `exited (code ${code}, signal ${signal})\n`);
    });
    return p as PlatformProcess;
  };
  const appEnvOf = (app: string, replica = 0) => ({
    PORT: String(portOf(app, replica)),
    HOST: '127.0.0.1', // loopback only, as `npm start` runs them (libs/http serve)
    DATABASE_URL: dbs[app].url,
    // Where modules find published plugins: this run's plugin module database.
    ...(dbs.plugin && { PLUGIN_DATABASE_URL: dbs.plugin.url }),
    ...(modules[app].nodeOptions && { NODE_OPTIONS: modules[app].nodeOptions }),
  });
  const fileOf = (app: string, kind: 'api' | 'worker') => path.join(root, 'dist/apps', app, kind === 'api' ? 'main.js' : 'worker.js');
  const labelOf = (base: string, replica: number) => (replica ? `${base}#${replica + 1}` : base);
  for (const app of apps) {
    for (const i of replicaList) {
      processes.push(spawnProcess({ label: labelOf(app, i), app, kind: 'api', replica: i }, fileOf(app, 'api'), appEnvOf(app, i)));
      if (existsSync(fileOf(app, 'worker'))) {
        // A worker's /metrics on a free port (METRICS_PORT 0): its default, the app's port + 1000, may be another suite's.
        processes.push(spawnProcess({ label: labelOf(`${app}-worker`, i), app, kind: 'worker', replica: i }, fileOf(app, 'worker'), { ...appEnvOf(app, i), METRICS_PORT: '0' }));
      }
    }
  }

  let nginx: ChildProcess | undefined;
  if (o.gatewayPort) {
    // Real nginx with the generated gateway config, its upstreams pointed at this run's ports: one
    // server line per replica (nginx balances round robin).
    const conf = readFileSync(path.join(root, 'docker/nginx.conf'), 'utf8')
      .replace(/server ([a-z-]+):(\d+);/g, (_m, _h, port) =>
        replicaList.map((i) => `server 127.0.0.1:${Number(port) + o.portOffset + REPLICA_PORT_STRIDE * i};`).join('\n    '),
      )
      .replace(/listen \d+;/, `listen 127.0.0.1:${o.gatewayPort};`)
      .replace(/pid [^;]+;/, `pid ${dir}/nginx.pid;`)
      .replace(/access_log [^;]+;/, `access_log ${dir}/access.log platform;`)
      .replace(/\/tmp\/nginx-/g, `${dir}/nginx-`);
    writeFileSync(path.join(dir, 'nginx.conf'), conf);
    nginx = spawn(nginxBin!, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stderr!.on('data', (d) => log.write(`[nginx] ${d}`));
  }

  const stop = async () => {
    stopping = true;
    const all = [...processes.map((p) => p.child), ...(nginx ? [nginx] : [])];
    // SIGTERM, then SIGKILL after 10 s: a process whose event loop is frozen never runs its handler.
    const running = all.filter((c) => c.exitCode === null && c.signalCode === null);
    for (const c of running) c.kill('SIGTERM');
    await Promise.all(
      running.map(
        (c) =>
          new Promise<void>((resolve) => {
            const force = setTimeout(() => c.kill('SIGKILL'), 10_000);
            c.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
          }),
      ),
    );
    log.end();
    await redis.flushdb().catch(() => {});
    redis.disconnect();
    for (const db of Object.values(dbs)) await db.drop();
  };
  const logs = () => readFileSync(path.join(dir, 'platform.log'), 'utf8');
  const aliveOf = (app: string) => () => {
    const p = processes.find((x) => x.app === app && x.exited);
    return p && `${p.label} exited (code ${p.exited!.code}, signal ${p.exited!.signal})`;
  };
  try {
    // Every process starts at once: on a small machine the first to be awaited waits for all of them to
    // load, so the bound grows with their number (30 s, or 2 s a process: 60 s for 3 replicas of 8 apps).
    const startMs = Math.max(30_000, processes.length * 2_000);
    for (const app of apps) for (const i of replicaList) await ready(`http://127.0.0.1:${portOf(app, i)}/readyz`, labelOf(app, i), aliveOf(app), startMs);
    if (o.gatewayPort) await ready(`${base}/healthz`, 'nginx', () => (nginx!.exitCode !== null ? `nginx exited (code ${nginx!.exitCode})` : undefined));
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${logs().slice(-4000)}`);
  }
  return {
    base,
    apps,
    dir,
    env,
    portOf,
    urlOf: (app, replica = 0) => `http://127.0.0.1:${portOf(app, replica)}`,
    replicas,
    dbUrl: (app) => dbs[app].url,
    processes,
    async restart(app) {
      const restarted = processes.filter((x) => x.app === app && x.exited);
      for (const p of restarted) {
        output(p.label, 'restarting\n');
        spawnProcess(p, fileOf(app, p.kind), appEnvOf(app, p.replica));
      }
      for (const i of new Set([0, ...restarted.filter((p) => p.kind === 'api').map((p) => p.replica)])) {
        await ready(`http://127.0.0.1:${portOf(app, i)}/readyz`, `${labelOf(app, i)} after a restart`, aliveOf(app));
      }
    },
    mintToken: (m) => mintToken(m, signer),
    admin: (...args) => {
      if (!dbs.identity) throw new Error('the admin CLI needs identity among the apps');
      const r = spawnSync(process.execPath, [path.join(root, 'dist/apps/identity/admin.js'), ...args], {
        cwd: root,
        env: { ...env, DATABASE_URL: dbs.identity.url },
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    stop,
    logs,
    outputMark: () => seq,
    outputSince: (mark, label) =>
      recent
        .filter((r) => r.seq > mark && (label === undefined || r.label === label))
        .map((r) => r.text)
        .join(''),
  };
}
