#!/usr/bin/env node
// `npm start`: builds, creates the databases, applies migrations, then runs every app, its worker and the
// local gateway (http://127.0.0.1:8080) in the foreground. A process that dies is restarted (backoff
// 0.5 s doubling to 30 s, reset after a minute up; see supervisor.mjs), with a `[start] ... restarting`
// line on stderr. Ctrl-C (SIGINT/SIGTERM) stops them all.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { imageEnv, imageFlags } from '../build/image-runtime.mjs';
import { createSupervisor } from './supervisor.mjs';
import { listenEnv } from './local-env.mjs';
import { REPLICA_PORT_STRIDE } from '../gateway/gateway.mjs';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../..');
process.chdir(root);
const modules = JSON.parse(readFileSync('config/modules.json', 'utf8'));
const only = process.env.START_APPS ? process.env.START_APPS.split(',') : undefined; // e.g. START_APPS=identity,monitoring
const apps = readdirSync('apps').filter((a) => existsSync(`apps/${a}/src/main.ts`) && modules[a] && (!only || only.includes(a)));
const log = (msg) => console.log(`[start] ${msg}`);

// The global switches the allow-list replaced: stop here, before anything starts, rather than have
// every app refuse to start (or, worse, silently ignore them).
const legacy = ['ALLOW_PRIVATE_URLS', 'SCHEMA_SYNC_ALLOW_PRIVATE_HOSTS', 'STORAGE_ALLOW_PRIVATE_HOSTS'].filter((k) => process.env[k]);
if (legacy.length) {
  console.error(`[start] ${legacy.join(', ')} is no longer supported: list the private hosts and networks outbound calls may reach in OUTBOUND_ALLOW_PRIVATE (default here: 127.0.0.0/8,::1), and unset ${legacy.join(', ')}.`);
  process.exit(2);
}

function reachable(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' } });
  if (r.status !== 0) {
    console.error(`[start] failed: ${cmd} ${args.join(' ')}`);
    process.exit(1);
  }
}

// Signing keys for local runs (production passes JWT_PRIVATE_KEY / JWT_PUBLIC_KEY from a Secret).
const keyDir = path.join(root, '.local/keys');
const privFile = path.join(keyDir, 'jwt-private.pem');
const pubFile = path.join(keyDir, 'jwt-public.pem');
if (!process.env.JWT_PUBLIC_KEY && !existsSync(pubFile)) {
  mkdirSync(keyDir, { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(privFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }));
  log(`generated a local token signing key pair in ${path.relative(root, keyDir)}/`);
}

for (const [name, port] of [['PostgreSQL', 5432], ['Redis', 6379]]) {
  if (!(await reachable(port))) {
    console.error(`[start] ${name} is not reachable on 127.0.0.1:${port}; start it first (see README).`);
    process.exit(1);
  }
}

log(`building ${apps.join(', ')}`);
run('node_modules/.bin/nx', ['run-many', '-t', 'build', '--projects', apps.join(','), '--outputStyle=stream']);
log('applying migrations');
// The plugin module's table is read by identity, cost-analysis and monitoring (PLUGIN_DATABASE_URL):
// migrated even when the plugin app is not started (START_APPS), so they find it (empty: built-ins serve).
const migrated = apps.includes('plugin') ? apps : [...apps, 'plugin'];
for (const app of migrated) if (existsSync(`apps/${app}/prisma/schema.prisma`)) run(process.execPath, ['tools/prisma/migrate.mjs', '--app', app]);

const baseEnv = {
  // The image's allocator settings (docker/Dockerfile's MALLOC_* variables), not its NODE_ENV.
  ...Object.fromEntries(Object.entries(imageEnv()).filter(([k]) => k.startsWith('MALLOC_'))),
  ...process.env,
  ...listenEnv(process.env), // the apps listen on loopback (HOST)
  PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || `http://127.0.0.1:${process.env.GATEWAY_PORT || 8080}`,
  // The local platform may fetch from this machine's loopback (a cost CSV, a Keycloak on localhost),
  // nothing else private; OUTBOUND_ALLOW_PRIVATE set by the caller wins. Never link-local or metadata.
  OUTBOUND_ALLOW_PRIVATE: process.env.OUTBOUND_ALLOW_PRIVATE ?? '127.0.0.0/8,::1',
  ...(process.env.JWT_PUBLIC_KEY ? {} : { JWT_PUBLIC_KEY_FILE: pubFile, JWT_PRIVATE_KEY_FILE: privFile }),
};
// START_REPLICAS=N: N processes of every app and every worker, replica i on the app's port + 10 × i,
// the gateway balancing over them (round robin). Nothing a replica keeps is needed by another: state
// lives in Postgres and Redis (docs/decisions/deployment.md).
const replicas = Number(process.env.START_REPLICAS || 1);
if (!Number.isInteger(replicas) || replicas < 1 || replicas >= REPLICA_PORT_STRIDE) {
  console.error(`[start] START_REPLICAS must be a whole number from 1 to ${REPLICA_PORT_STRIDE - 1}`);
  process.exit(2);
}
const supervisor = createSupervisor();
const start = (label, file, env) => supervisor.add(label, process.execPath, [...imageFlags(), file], { env: { ...baseEnv, ...env } });
for (const app of apps) {
  for (let i = 0; i < replicas; i++) {
    const env = { PORT: String(modules[app].port + REPLICA_PORT_STRIDE * i), ...(modules[app].nodeOptions && { NODE_OPTIONS: modules[app].nodeOptions }) };
    const name = i ? `${app}#${i + 1}` : app;
    start(name, `dist/apps/${app}/main.js`, env);
    if (existsSync(`dist/apps/${app}/worker.js`)) start(`${name} worker`, `dist/apps/${app}/worker.js`, env);
  }
}
start('gateway', 'tools/gateway/gateway.mjs', { START_REPLICAS: String(replicas) });

const stop = () => supervisor.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
