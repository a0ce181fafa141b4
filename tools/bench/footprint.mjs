#!/usr/bin/env node
// The platform's footprint: starts every app and worker of the production build (dist/apps/<app>/, the
// command and ENV of docker/Dockerfile, each module's nodeOptions of config/modules.json) on ports and a Redis
// database of its own, with fresh databases, one process at a time, and reports per process:
//  - startup: from the process start to its "listening" line (a worker: its "started" line), migrations
//    excluded (they run before, with tools/prisma/migrate.mjs);
//  - idle RSS (VmRSS of /proc/<pid>/status) after --idle seconds without traffic;
//  - with --load N: N seconds of sustained load on every app (logins with argon2, lists, the OpenAPI and
//    docs pages, webhook events through monitoring's worker), the peak RSS (VmHWM), and the RSS --after
//    seconds after the load ended.
// Goals (issue #14): every process <= 90 MB idle, < 150 MB a minute after the load, each app listening
// in < 1.5 s. It exits non-zero only when it could not run, never because a goal was missed.
//
//   node tools/bench/footprint.mjs [--idle 20] [--load 30] [--after 60] [--markdown file.md] [--json file.json]
//        [--no-build] [--apps identity,monitoring] [--port-offset 21000] [--redis redis://127.0.0.1:6379/8]
//        [--breakdown]   (also print each process's process.memoryUsage(): heap, external, array buffers)
//        [--node-flags "--flag ..."] (instead of the Dockerfile's, to try a flag)
// Environment: FOOTPRINT_IDLE_SECONDS, FOOTPRINT_LOAD_SECONDS, FOOTPRINT_AFTER_SECONDS (the same options).
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import Redis from 'ioredis';
import { SignJWT } from 'jose';
import { imageEnv, imageFlags } from '../build/image-runtime.mjs';
import { migrateApp } from '../prisma/migrate.mjs';
import { load } from './lib/load.mjs';
import { record } from './lib/report.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
process.chdir(root);
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const flag = (name) => argv.includes(`--${name}`);
const GOAL_IDLE_MB = 90;
const GOAL_AFTER_MB = 150;
const GOAL_STARTUP_MS = 1500;
const idleSeconds = Number(opt('idle', process.env.FOOTPRINT_IDLE_SECONDS ?? 20));
const loadSeconds = Number(opt('load', process.env.FOOTPRINT_LOAD_SECONDS ?? 0));
const afterSeconds = Number(opt('after', process.env.FOOTPRINT_AFTER_SECONDS ?? 60));
// Below the kernel's ephemeral range (32768-60999): a port there may be taken by any outgoing connection.
const portOffset = Number(opt('port-offset', 21_000));
const redisUrl = opt('redis', 'redis://127.0.0.1:6379/8');
const markdownFile = opt('markdown');
const jsonFile = opt('json');
const breakdown = flag('breakdown');
const modules = JSON.parse(readFileSync('config/modules.json', 'utf8'));
const apps = (opt('apps') ? opt('apps').split(',') : Object.keys(modules)).filter((a) => existsSync(`apps/${a}/src/main.ts`));
const log = (m) => process.stderr.write(`[footprint] ${m}\n`);

// The production command's flags and environment (docker/Dockerfile's CMD and ENV).
const nodeFlags = opt('node-flags') !== undefined ? opt('node-flags').split(/\s+/).filter(Boolean) : imageFlags();

const reachable = (port) =>
  new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (kb) => Math.round(kb / 102.4) / 10;

function procStatus(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

// ------------------------------------------------------------------ preparation
for (const [name, port] of [['PostgreSQL', 5432], ['Redis', 6379]]) {
  if (!(await reachable(port))) {
    console.error(`footprint: ${name} is not reachable on 127.0.0.1:${port}`);
    process.exit(2);
  }
}
for (const app of apps) {
  if (await reachable(modules[app].port + portOffset)) {
    console.error(`footprint: port ${modules[app].port + portOffset} (${app}) is in use; choose another --port-offset`);
    process.exit(2);
  }
}
if (!flag('no-build')) {
  log(`building ${apps.join(', ')}`);
  for (const app of apps) {
    const r = spawnSync(process.execPath, ['tools/build/build-app.mjs', app], { encoding: 'utf8' });
    if (r.status !== 0) {
      console.error(`footprint: build of ${app} failed\n${r.stderr}`);
      process.exit(2);
    }
  }
}
const dbUrl = (app) => `postgresql://postgres@127.0.0.1:5432/footprint_${app.replace(/-/g, '_')}`;
{
  const admin = new pg.Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  for (const app of apps) await admin.query(`DROP DATABASE IF EXISTS footprint_${app.replace(/-/g, '_')} WITH (FORCE)`);
  await admin.end();
}
log('applying migrations to fresh databases');
for (const app of apps) if (existsSync(`apps/${app}/prisma/schema.prisma`)) await migrateApp(app, dbUrl(app));
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
redis.on('error', () => {});
await redis.flushdb();

const dir = mkdtempSync(path.join(os.tmpdir(), 'footprint-'));
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
writeFileSync(path.join(dir, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
writeFileSync(path.join(dir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
const password = 'footprint-admin-password';
const base = `http://127.0.0.1:${8080 + portOffset}`;
const env = {
  ...process.env,
  ...imageEnv(), // NODE_ENV=production among them
  SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  REDIS_URL: redisUrl,
  PUBLIC_BASE_URL: base,
  JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem'),
  JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'),
  BOOTSTRAP_PASSWORD: password,
  // The load logs in many times from one address: the per-address and per-user limits would refuse it.
  TOKEN_ISSUE_RATE_ADDRESS_POINTS: '0',
  TOKEN_ISSUE_RATE_USER_POINTS: '0',
  LOG_LEVEL: 'info',
};
delete env.NODE_OPTIONS;

// ------------------------------------------------------------------ the processes, one at a time
const processes = [];
const children = [];
const stopAll = () => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGTERM'));
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

function startProcess(app, kind) {
  const file = `dist/apps/${app}/${kind === 'api' ? 'main' : 'worker'}.js`;
  const label = kind === 'api' ? app : `${app} worker`;
  const preload = breakdown ? ['--require', path.join(root, 'tools/bench/lib/memory-report.cjs')] : [];
  const started = Date.now();
  const child = spawn(process.execPath, [...nodeFlags, ...preload, file], {
    env: { ...env, PORT: String(modules[app].port + portOffset), DATABASE_URL: dbUrl(app), ...(modules[app].nodeOptions && { NODE_OPTIONS: modules[app].nodeOptions }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const p = { label, app, kind, child, started, readyMs: undefined, output: '', breakdowns: [] };
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start in 60 s\n${p.output.slice(-3000)}`)), 60_000);
    let rest = '';
    const onLine = (line) => {
      let o;
      try {
        o = JSON.parse(line);
      } catch {
        return;
      }
      if (o.memory_report) return void p.breakdowns.push(o.memory_report);
      if (p.readyMs === undefined && typeof o.msg === 'string' && /( listening| worker started)$/.test(o.msg)) {
        p.readyMs = (o.time === undefined ? Date.now() : typeof o.time === 'number' ? o.time : Date.parse(o.time)) - started;
        clearTimeout(timer);
        resolve();
      }
    };
    const onData = (d) => {
      p.output = (p.output + d).slice(-20_000);
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      lines.forEach(onLine);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (p.output = (p.output + d).slice(-20_000)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (code ${code}, signal ${signal})\n${p.output.slice(-3000)}`));
    });
  });
  processes.push(p);
  return ready;
}

async function memoryBreakdown() {
  if (!breakdown) return {};
  const before = Object.fromEntries(processes.map((p) => [p.label, p.breakdowns.length]));
  for (const p of processes) p.child.kill('SIGUSR2');
  for (let i = 0; i < 50 && processes.some((p) => p.breakdowns.length === before[p.label]); i++) await sleep(100);
  return Object.fromEntries(processes.map((p) => [p.label, p.breakdowns.at(-1)]));
}

try {
  for (const app of apps) {
    log(`starting ${app}`);
    await startProcess(app, 'api');
    if (existsSync(`dist/apps/${app}/worker.js`)) await startProcess(app, 'worker');
  }
} catch (e) {
  console.error(`footprint: ${e.message}`);
  stopAll();
  process.exit(2);
}
log(`all ${processes.length} processes up; ${idleSeconds} s idle`);
await sleep(idleSeconds * 1000);
const idle = Object.fromEntries(processes.map((p) => [p.label, procStatus(p.child.pid)]));
const idleBreakdown = await memoryBreakdown();

// ------------------------------------------------------------------ sustained load (optional)
let after;
let afterBreakdown = {};
let loadSummary;
if (loadSeconds > 0) {
  const url = (app, p) => `http://127.0.0.1:${modules[app].port + portOffset}${p}`;
  const sign = (claims) =>
    new SignJWT({ token_type: 'ACCESS_TOKEN', user_id: 'admin', domain_id: 'domain-local', permissions: ['*'], user_type: 'USER', ...claims })
      .setProtectedHeader({ alg: 'EdDSA' }).setIssuer('platform.identity').setAudience('platform').setSubject('admin')
      .setIssuedAt().setExpirationTime('1h').sign(privateKey);
  const ws = await sign({ workspace_id: 'workspace-local', role_type: 'WORKSPACE_OWNER', role_id: 'managed-workspace-owner', scope: 'WORKSPACE' });
  const dom = await sign({ workspace_id: '', role_type: 'DOMAIN_ADMIN', role_id: 'managed-domain-admin', scope: 'DOMAIN' });
  const post = (app, p, body, token) =>
    fetch(url(app, p), { method: 'POST', headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) })
      .then(async (r) => ({ status: r.status, body: await r.json().catch(() => ({})) }));
  // monitoring: a webhook of a project of the directory, to post Alertmanager payloads to (its worker stores them).
  let webhookPath;
  if (apps.includes('monitoring') && apps.includes('identity')) {
    const r = spawnSync(process.execPath, ['dist/apps/identity/admin.js', 'project', 'create', '--domain-id', 'domain-local', '--workspace-id', 'workspace-local', '--project-id', 'project-footprint', '--name', 'Footprint'], {
      env: { ...env, DATABASE_URL: dbUrl('identity') },
      encoding: 'utf8',
    });
    if (r.status !== 0) log(`could not create a project for the webhook load: ${r.stderr.trim().slice(0, 300)}`);
    for (let i = 0; i < 20 && !webhookPath; i++) {
      const hook = await post('monitoring', '/monitoring/v1/webhook/create', { name: `footprint-${i}`, plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-footprint' }, ws);
      if (hook.status === 200) webhookPath = new URL(hook.body.webhook_url).pathname;
      else await sleep(500);
    }
    if (!webhookPath) log('no webhook could be created: monitoring gets list requests only');
  }
  const alert = JSON.parse(readFileSync('tools/e2e/fixtures/alertmanager.json', 'utf8'));
  const lists = {
    identity: ['/identity/v2/project-group/list', () => ({}), ws],
    'cost-analysis': ['/cost-analysis/v1/exchange-rate/list', () => ({ domain_id: 'domain-local' }), ws],
    statistics: ['/statistics/v1/storage/list', () => ({ domain_id: 'domain-local' }), dom],
    repository: ['/repository/v2/schema/list', () => ({ domain_id: 'domain-local' }), ws],
    monitoring: ['/monitoring/v1/webhook/list', () => ({}), ws],
    inventory: ['/inventory/v1/cloud-service/list', () => ({}), ws],
    opsflow: ['/opsflow/v1/event/list', () => ({}), ws],
    plugin: ['/plugin/v1/supervisor/list', () => ({}), dom],
  };
  const durationMs = loadSeconds * 1000;
  const jobs = [];
  for (const app of apps) {
    const [p, body, token] = lists[app];
    jobs.push(load({ url: url(app, p), body, headers: { authorization: `Bearer ${token}` }, concurrency: 4, durationMs }).then((r) => [`${app} list`, r]));
    // The API reference pages and documents, built on first use.
    jobs.push(
      (async () => {
        let n = 0;
        for (const end = Date.now() + durationMs; Date.now() < end; n++) {
          await fetch(url(app, `/${app}/openapi.json`)).then((r) => r.arrayBuffer());
          await fetch(url(app, `/${app}/docs`)).then((r) => r.arrayBuffer());
          await sleep(500);
        }
        return [`${app} docs`, { requests: n * 2, errors: 0, rps: (n * 2) / loadSeconds }];
      })(),
    );
  }
  if (apps.includes('identity')) {
    // Logins: argon2id verification of the bootstrap admin's password, two at a time.
    const login = () => ({ credentials: { user_id: 'admin', password }, domain_id: 'domain-local' });
    jobs.push(load({ url: url('identity', '/identity/v2/token/issue'), body: login, concurrency: 2, durationMs }).then((r) => ['identity login', r]));
  }
  if (webhookPath) {
    jobs.push(load({ url: url('monitoring', webhookPath), body: (i) => ({ ...alert, groupKey: `g-${i % 500}` }), concurrency: 4, durationMs }).then((r) => ['monitoring webhook', r]));
  }
  log(`${loadSeconds} s of load on ${apps.join(', ')}`);
  for (const p of processes) p.peakBefore = procStatus(p.child.pid).hwm;
  const results = await Promise.all(jobs);
  loadSummary = results.map(([label, r]) => ({ label, requests: r.requests, errors: r.errors, rps: Math.round(r.rps) }));
  for (const s of loadSummary) log(`  ${s.label.padEnd(20)} ${String(s.rps).padStart(6)} req/s  (${s.requests} requests, ${s.errors} errors)`);
  const peak = Object.fromEntries(processes.map((p) => [p.label, procStatus(p.child.pid).hwm]));
  log(`load over; ${afterSeconds} s until the after-load reading`);
  await sleep(afterSeconds * 1000);
  after = Object.fromEntries(processes.map((p) => [p.label, { ...procStatus(p.child.pid), peak: peak[p.label] }]));
  afterBreakdown = await memoryBreakdown();
}

// ------------------------------------------------------------------ the table
const rows = processes.map((p) => {
  const i = idle[p.label];
  const a = after?.[p.label];
  const goals = [i.rss / 1024 <= GOAL_IDLE_MB, a ? a.rss / 1024 < GOAL_AFTER_MB : true, p.kind === 'api' ? p.readyMs < GOAL_STARTUP_MS : true];
  return {
    process: p.label,
    kind: p.kind,
    startup_ms: p.readyMs,
    idle_rss_mb: mb(i.rss),
    peak_rss_mb: a ? mb(a.peak) : undefined,
    after_load_rss_mb: a ? mb(a.rss) : undefined,
    met: goals.every(Boolean),
    idle_breakdown: idleBreakdown[p.label],
    after_breakdown: afterBreakdown[p.label],
  };
});
const head = ['process', 'startup ms', 'idle RSS MB', ...(after ? ['peak RSS MB', 'after-load RSS MB'] : []), 'goal'];
const cells = (r) => [
  r.process,
  r.startup_ms === undefined ? '' : String(r.startup_ms),
  String(r.idle_rss_mb),
  ...(after ? [String(r.peak_rss_mb), String(r.after_load_rss_mb)] : []),
  r.met ? 'met' : 'missed',
];
const goalLine = `goals: idle RSS <= ${GOAL_IDLE_MB} MB, < ${GOAL_AFTER_MB} MB ${afterSeconds} s after ${loadSeconds} s of load, an app listening < ${GOAL_STARTUP_MS} ms after its process starts (migrations excluded)`;
const widths = head.map((h, k) => Math.max(h.length, ...rows.map((r) => cells(r)[k].length)));
console.log(`footprint: ${processes.length} processes, node ${process.version} ${nodeFlags.join(' ')}, ${idleSeconds} s idle${after ? `, ${loadSeconds} s load, read ${afterSeconds} s after` : ''}`);
console.log(head.map((h, k) => h.padEnd(widths[k])).join('  '));
for (const r of rows) console.log(cells(r).map((c, k) => (k ? c.padStart(widths[k]) : c.padEnd(widths[k]))).join('  '));
console.log(goalLine);
if (breakdown) {
  console.log('\nprocess.memoryUsage() (MB): rss / heapTotal / heapUsed / external / arrayBuffers');
  for (const r of rows) {
    const f = (b) => (b ? [b.rss, b.heapTotal, b.heapUsed, b.external, b.arrayBuffers].map((x) => (x / 1048576).toFixed(1)).join(' / ') : '-');
    console.log(`${r.process.padEnd(22)} idle ${f(r.idle_breakdown)}${after ? `   after ${f(r.after_breakdown)}` : ''}`);
  }
}
if (markdownFile) {
  const md = [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, k) => (k ? ' ---: ' : ' --- ')).join('|')}|`,
    ...rows.map((r) => `| ${cells(r).join(' | ')} |`),
    '',
    goalLine,
    '',
  ].join('\n');
  writeFileSync(markdownFile, md);
}
if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ nodeFlags, idleSeconds, loadSeconds, afterSeconds, rows, load: loadSummary }, null, 2));
for (const r of rows) {
  record({ measure: `${r.process}: idle RSS`, ours: r.idle_rss_mb, unit: 'MB', goal: `≤ ${GOAL_IDLE_MB} MB`, met: r.idle_rss_mb <= GOAL_IDLE_MB });
  if (after) record({ measure: `${r.process}: RSS ${afterSeconds} s after load`, ours: r.after_load_rss_mb, unit: 'MB', goal: `< ${GOAL_AFTER_MB} MB`, met: r.after_load_rss_mb < GOAL_AFTER_MB });
  if (r.kind === 'api') record({ measure: `${r.process}: start → listening`, ours: r.startup_ms, unit: 'ms', goal: `< ${GOAL_STARTUP_MS} ms`, met: r.startup_ms < GOAL_STARTUP_MS });
}

// ------------------------------------------------------------------ stop, clean up
await Promise.all(
  processes.map(
    (p) =>
      new Promise((resolve) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
        const force = setTimeout(() => p.child.kill('SIGKILL'), 12_000);
        p.child.once('exit', () => (clearTimeout(force), resolve()));
        p.child.kill('SIGTERM');
      }),
  ),
);
await redis.flushdb().catch(() => {});
redis.disconnect();
{
  const admin = new pg.Client({ connectionString: 'postgresql://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  for (const app of apps) await admin.query(`DROP DATABASE IF EXISTS footprint_${app.replace(/-/g, '_')} WITH (FORCE)`).catch(() => {});
  await admin.end();
}
process.exit(0);
