import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { createTempDatabase, waitFor, type TempDatabase } from '@platform/testing';

const root = path.resolve(__dirname, '../../..');
const modules = JSON.parse(readFileSync(path.join(root, 'config/modules.json'), 'utf8')) as Record<string, { port: number; worker: boolean; nodeOptions?: string }>;

/** Ports of this run: the standard ones shifted, so a running `npm start` is left alone. */
const OFFSET = 20_000;
export const GATEWAY_PORT = 28_080;
export const portOf = (m: string) => modules[m].port + OFFSET;
export const REDIS_URL = 'redis://127.0.0.1:6379/9';

export interface Platform {
  base: string;
  apps: string[];
  dir: string;
  env: Record<string, string>;
  dbUrl: (app: string) => string;
  admin: (...args: string[]) => unknown;
  stop(): Promise<void>;
  logs(): string;
}

/** Until `url` answers 2xx. */
const ready = (url: string, label: string, ms = 30_000) => waitFor(() => fetch(url).then((r) => r.ok, () => false), ms, label, 200);

/**
 * The whole platform as it runs in production, on this machine: every app built with the production
 * build, its own fresh database, one Redis database of its own, the workers, and real nginx with the
 * generated gateway config in front.
 */
export async function startPlatform(extraEnv: Record<string, string> = {}): Promise<Platform> {
  const apps = Object.keys(modules).filter((m) => existsSync(path.join(root, 'apps', m, 'src/main.ts')));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'e2e-'));
  for (const app of apps) {
    const r = spawnSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), app], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build of ${app} failed: ${r.stderr}`);
  }
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  const dbs: Record<string, TempDatabase> = {};
  for (const app of apps) dbs[app] = await createTempDatabase({ app });

  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(path.join(dir, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(path.join(dir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  const base = `http://127.0.0.1:${GATEWAY_PORT}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    REDIS_URL,
    PUBLIC_BASE_URL: base,
    JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem'),
    JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'),
    BOOTSTRAP_PASSWORD: 'e2e-admin-password',
    LOG_LEVEL: 'warn',
    LOG_SYNC: 'true',
    ...extraEnv,
  };
  delete env.JEST_WORKER_ID;
  const log = createWriteStream(path.join(dir, 'platform.log'));
  const children: ChildProcess[] = [];
  const start = (label: string, file: string, appEnv: Record<string, string>) => {
    const child = spawn(process.execPath, [file], { cwd: root, env: { ...env, ...appEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => log.write(`[${label}] ${d}`));
    child.stderr!.on('data', (d) => log.write(`[${label}] ${d}`));
    children.push(child);
  };
  for (const app of apps) {
    const appEnv = { PORT: String(portOf(app)), DATABASE_URL: dbs[app].url, ...(modules[app].nodeOptions && { NODE_OPTIONS: modules[app].nodeOptions }) };
    start(app, path.join(root, 'dist/apps', app, 'main.js'), appEnv);
    if (existsSync(path.join(root, 'dist/apps', app, 'worker.js'))) start(`${app}-worker`, path.join(root, 'dist/apps', app, 'worker.js'), appEnv);
  }

  // Real nginx with the generated gateway config, its upstreams pointed at this run's ports.
  const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
  if (!nginxBin) throw new Error('nginx is not installed (apt-get install nginx-light); .ci/run installs it');
  const conf = readFileSync(path.join(root, 'docker/nginx.conf'), 'utf8')
    .replace(/server ([a-z-]+):(\d+);/g, (_m, _h, port) => `server 127.0.0.1:${Number(port) + OFFSET};`)
    .replace(/listen \d+;/, `listen 127.0.0.1:${GATEWAY_PORT};`)
    .replace(/pid [^;]+;/, `pid ${dir}/nginx.pid;`)
    .replace(/access_log [^;]+;/, 'access_log off;')
    .replace(/\/tmp\/nginx-/g, `${dir}/nginx-`);
  writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const nginx = spawn(nginxBin, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
  nginx.stderr!.on('data', (d) => log.write(`[nginx] ${d}`));

  const stop = async () => {
    for (const c of [...children, nginx]) c.kill('SIGTERM');
    await Promise.all([...children, nginx].map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r)))));
    log.end();
    await redis.flushdb().catch(() => {});
    redis.disconnect();
    for (const db of Object.values(dbs)) await db.drop();
  };
  try {
    for (const app of apps) await ready(`http://127.0.0.1:${portOf(app)}/readyz`, app);
    await ready(`${base}/healthz`, 'nginx');
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${readFileSync(path.join(dir, 'platform.log'), 'utf8').slice(-4000)}`);
  }
  return {
    base,
    apps,
    dir,
    env,
    dbUrl: (app) => dbs[app].url,
    admin: (...args) => {
      const r = spawnSync(process.execPath, [path.join(root, 'dist/apps/identity/admin.js'), ...args], {
        cwd: root,
        env: { ...env, DATABASE_URL: dbs.identity.url },
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
    stop,
    logs: () => readFileSync(path.join(dir, 'platform.log'), 'utf8'),
  };
}

/** POST through the gateway; answers status and JSON body. */
export async function call(base: string, p: string, body: unknown, token?: string) {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
