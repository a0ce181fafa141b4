// What every benchmark of tools/bench sets up the same way: a fresh database migrated for an app, an
// ed25519 key pair with access tokens signed as identity signs them, and waiting for a started app's
// /readyz. Loopback and the local PostgreSQL only.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { SignJWT } from 'jose';
import { migrateApp } from '../../prisma/migrate.mjs';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
export const adminUrl = 'postgresql://postgres@127.0.0.1:5432/postgres';
export const databaseUrl = (name) => `postgresql://postgres@127.0.0.1:5432/${name}`;

/** Runs `sql` on the maintenance database (CREATE/DROP DATABASE). */
export async function adminQuery(sql, values) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await admin.query(sql, values);
  } finally {
    await admin.end();
  }
}

/** Drops database `name` if it exists, creates it with `app`'s migrations applied, and answers its URL. */
export async function freshDatabase(app, name) {
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  const url = databaseUrl(name);
  await migrateApp(app, url);
  return url;
}

/**
 * A signing key pair (`publicPem` is what an app's JWT_PUBLIC_KEY takes) and `token(claims)`: an access
 * token as identity issues it, for a workspace owner of d1/ws-1 unless `claims` say otherwise.
 */
export function signingKeys() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }),
    token: (claims = {}, ttl = '2h') => {
      const c = {
        token_type: 'ACCESS_TOKEN', user_id: 'owner', domain_id: 'd1', workspace_id: 'ws-1', role_type: 'WORKSPACE_OWNER',
        role_id: 'managed-workspace-owner', scope: 'WORKSPACE', permissions: ['*'], user_type: 'USER', ...claims,
      };
      return new SignJWT(c)
        .setProtectedHeader({ alg: 'EdDSA' }).setIssuer('platform.identity').setAudience('platform').setSubject(c.user_id)
        .setIssuedAt().setExpirationTime(ttl).sign(privateKey);
    },
  };
}

/** Resolves once http://127.0.0.1:<port>/readyz answers 200 (at most 20 s). */
export async function waitReady(port, what = `the app on port ${port}`) {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) =>
      http.get(`http://127.0.0.1:${port}/readyz`, (r) => (r.resume(), resolve(r.statusCode === 200))).on('error', () => resolve(false)),
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not become ready`);
}

/**
 * CPU time (user + system) process `pid` has used so far, in seconds, from /proc: per request or per
 * event it says what a process spends whatever else the machine runs (throughput alone moves with the
 * load of a shared machine).
 */
export function cpuSeconds(pid) {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/** cpuSeconds in its two parts: in the process's own code (`user`) and in the kernel on its behalf (`system`). */
export function cpuSplit(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(f[11]) / 100, system: Number(f[12]) / 100 }; // utime, stime in clock ticks (USER_HZ = 100)
}
