#!/usr/bin/env node
// identity's token/grant (a WORKSPACE grant from a refresh token: verify, then the domain, user, bindings
// and workspace read under the shared per-user and per-workspace locks of issue #27, the database's
// clock, sign) through the built app. With BENCH_BASE_APP (another build of identity's main.js, e.g.
// one made from main before #27) both are measured in alternating slices and compared: the cost of the
// locked reading. Throughput, p50/p99 and server CPU per request (from /proc).
//   npm run build && node tools/bench/identity-grant.mjs
// With BENCH_CUSTOM_ROLE=1 (no base app), a second subject on the same server is a user bound in ws-1
// to a custom role (issue #29): its grant also reads the role under the role's lock; both subjects are
// measured in alternating slices and compared.
//   BENCH_SECONDS (10), BENCH_CONCURRENCY (16), BENCH_SLICES (4), BENCH_BASE_APP=file, BENCH_CUSTOM_ROLE
import { spawn } from 'node:child_process';
import path from 'node:path';
import { load, summarize } from './lib/load.mjs';
import { record } from './lib/report.mjs';
import { cpuSplit, freshDatabase, root, signingKeys, waitReady } from './lib/setup.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 16);
const slices = Math.max(1, Number(process.env.BENCH_SLICES || 4));
const keys = signingKeys();
const baseApp = process.env.BENCH_BASE_APP;

/** One identity process on its own fresh database (bootstrap: domain d1, workspace ws-1, admin). */
async function start(label, file, port) {
  const dbUrl = await freshDatabase('identity', `bench_grant_${label}`);
  const child = spawn(process.execPath, [file], {
    env: {
      ...process.env, PORT: String(port), DATABASE_URL: dbUrl, BOOTSTRAP_DOMAIN_ID: 'd1', BOOTSTRAP_WORKSPACE_ID: 'ws-1',
      BOOTSTRAP_PASSWORD: 'bench-password-1', JWT_PRIVATE_KEY: keys.privatePem, JWT_PUBLIC_KEY: keys.publicPem,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  await waitReady(port, `identity (${label})`);
  const res = await fetch(`http://127.0.0.1:${port}/identity/v2/token/issue`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ domain_id: 'd1', credentials: { user_id: 'admin', password: 'bench-password-1' } }),
  });
  if (res.status !== 200) throw new Error(`${label}: token/issue answered ${res.status}: ${await res.text()}`);
  const { refresh_token } = await res.json();
  return { label, child, url: `http://127.0.0.1:${port}/identity/v2/token/grant`, refresh: refresh_token, runs: [], cpu: 0 };
}

const servers = [
  ...(baseApp ? [await start('base', path.resolve(baseApp), 18121)] : []),
  await start('identity', path.join(root, 'dist/apps/identity/main.js'), 18122),
];

/** A user bound in ws-1 to a new custom WORKSPACE_MEMBER role, logged in: a second subject on `x`'s server. */
async function customRoleSubject(x) {
  const base = x.url.replace(/token\/grant$/, '');
  const post = async (p, body, token) => {
    const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${p} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const admin = (await post('token/grant', { grant_type: 'REFRESH_TOKEN', token: x.refresh, scope: 'DOMAIN' })).access_token;
  const role = await post('role/create', { name: 'bench custom', role_type: 'WORKSPACE_MEMBER', permissions: ['identity:', 'inventory:'] }, admin);
  await post('user/create', { user_id: 'bench-custom', password: 'bench-password-2' }, admin);
  await post('role-binding/create', { user_id: 'bench-custom', role_id: role.role_id, resource_group: 'WORKSPACE', workspace_id: 'ws-1' }, admin);
  const { refresh_token } = await post('token/issue', { domain_id: 'd1', credentials: { user_id: 'bench-custom', password: 'bench-password-2' } });
  return { ...x, label: 'custom', refresh: refresh_token, runs: [], cpu: 0 };
}
const customRole = !baseApp && process.env.BENCH_CUSTOM_ROLE === '1';
if (customRole) {
  servers[0].label = 'managed';
  servers.push(await customRoleSubject(servers[0]));
}
const bodyOf = (x) => () => ({ grant_type: 'REFRESH_TOKEN', token: x.refresh, scope: 'WORKSPACE', workspace_id: 'ws-1' });
for (const x of servers) await load({ url: x.url, body: bodyOf(x), concurrency, durationMs: 2000 }); // warm-up
for (let i = 0; i < slices; i++) {
  for (const x of i % 2 ? [...servers].reverse() : servers) {
    const cpu0 = cpuSplit(x.child.pid);
    x.runs.push(await load({ url: x.url, body: bodyOf(x), concurrency, durationMs: (seconds * 1000) / slices }));
    const cpu1 = cpuSplit(x.child.pid);
    x.cpu += cpu1.user - cpu0.user + cpu1.system - cpu0.system;
  }
}
console.log(`token/grant (WORKSPACE), concurrency ${concurrency}, ${seconds} s each in ${slices} alternating slices`);
let errors = 0;
const results = servers.map((x) => {
  const r = summarize(x.runs);
  r.cpuUs = (x.cpu * 1e6) / r.requests;
  errors += r.errors;
  console.log(`${x.label.padEnd(9)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  CPU ${r.cpuUs.toFixed(0)} µs/request  (${r.requests} requests, ${r.errors} errors)`);
  return r;
});
if (customRole) {
  const [a, b] = results;
  console.log(`ratio custom/managed: throughput ${(b.rps / a.rps).toFixed(2)}, p99 ${(b.p99 / a.p99).toFixed(2)}, CPU per request ${(b.cpuUs / a.cpuUs).toFixed(2)}`);
  record({ measure: 'identity token/grant (WORKSPACE, custom role): throughput', ours: b.rps, unit: 'req/s' });
  record({ measure: 'identity token/grant (WORKSPACE, custom role): p99', ours: b.p99, unit: 'ms' });
} else if (baseApp) {
  const [a, b] = results;
  console.log(`ratio identity/base: throughput ${(b.rps / a.rps).toFixed(2)}, p99 ${(b.p99 / a.p99).toFixed(2)}, CPU per request ${(b.cpuUs / a.cpuUs).toFixed(2)}`);
} else {
  const [r] = results;
  record({ measure: 'identity token/grant (WORKSPACE, locked reading): throughput', ours: r.rps, unit: 'req/s' });
  record({ measure: 'identity token/grant (WORKSPACE, locked reading): p99', ours: r.p99, unit: 'ms' });
}
for (const x of servers) x.child.kill('SIGTERM');
process.exit(errors ? 1 : 0);
