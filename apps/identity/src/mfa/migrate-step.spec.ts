import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isSealedText } from '@platform/secrets';
import { createTempDatabase, withEnv, type TempDatabase } from '@platform/testing';
import { loadConfig } from '../config';
import { openMfaSecret } from './secret';
import { openExternalAuthSecret, sealExternalAuthSecret } from '../external-auth/secret';

/**
 * The backfill where deployments run it: tools/prisma/migrate.mjs (npm run migrate, the compose and
 * k8s migration steps) runs prisma/after-migrate.json's `secrets seal` with identity's built admin entry.
 */
const root = path.resolve(__dirname, '../../../..');
const key = randomBytes(32);
jest.setTimeout(60_000);

describe('the migration step seals MFA secrets', () => {
  let db: TempDatabase;
  beforeAll(async () => {
    const r = spawnSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), 'identity'], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
    db = await createTempDatabase({ app: 'identity' });
  });
  afterAll(() => db?.drop());

  const migrate = (env: Record<string, string | undefined>) =>
    spawnSync(process.execPath, [path.join(root, 'tools/prisma/migrate.mjs'), '--app', 'identity', '--database-url', db.url], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, SECRET_ENCRYPTION_KEY: undefined, ...env },
    });

  it('seals a plain secret of an existing database, once, and leaves users without MFA alone', async () => {
    await db.pool.query(`INSERT INTO domain (domain_id, name) VALUES ('d1', 'd1')`);
    await db.pool.query(`INSERT INTO "user" (domain_id, user_id, mfa_enabled, mfa_secret) VALUES ('d1', 'old', true, 'JBSWY3DPEHPK3PXP'), ('d1', 'none', false, NULL)`);
    expect(migrate({ NODE_ENV: 'production' })).toMatchObject({ status: 1, stderr: expect.stringMatching(/SECRET_ENCRYPTION_KEY is required/) });

    const run = migrate({ SECRET_ENCRYPTION_KEY: key.toString('base64') });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/"sealed": 1/);
    const { rows } = await db.pool.query(`SELECT domain_id, user_id, mfa_secret FROM "user" ORDER BY user_id`);
    expect(rows[0].mfa_secret).toBeNull();
    expect(isSealedText(rows[1].mfa_secret)).toBe(true);
    expect(rows[1].mfa_secret).not.toContain('JBSWY3DPEHPK3PXP');
    expect(openMfaSecret([key], rows[1])).toBe('JBSWY3DPEHPK3PXP');
    expect(migrate({ SECRET_ENCRYPTION_KEY: key.toString('base64') }).stdout).toMatch(/"sealed": 0/);
  });

  it("seals external auth's secret_data again under the current key after a rotation", async () => {
    const old = randomBytes(32);
    await db.pool.query(`INSERT INTO domain (domain_id, name) VALUES ('d2', 'd2') ON CONFLICT DO NOTHING`);
    await db.pool.query(`INSERT INTO external_auth (domain_id, plugin_id, secret_data) VALUES ('d2', 'plugin-oidc-identity-auth', $1)`, [
      JSON.stringify(sealExternalAuthSecret([old], 'd2', { client_secret: 'oidc-client-secret' })),
    ]);
    // The new key first, the old one still configured to open what it sealed.
    const run = migrate({ SECRET_ENCRYPTION_KEY: key.toString('base64'), SECRET_ENCRYPTION_PREVIOUS_KEYS: old.toString('base64') });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/"column": "external_auth.secret_data",\s+"sealed": 0,\s+"resealed": 1/);
    const { rows } = await db.pool.query(`SELECT domain_id, secret_data FROM external_auth WHERE domain_id = 'd2'`);
    expect(JSON.stringify(rows[0].secret_data)).not.toContain('oidc-client-secret');
    expect(openExternalAuthSecret([key], rows[0])).toEqual({ client_secret: 'oidc-client-secret' });
  });

  it('refuses to start in production without SECRET_ENCRYPTION_KEY', () => {
    withEnv({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: undefined }, () => expect(() => loadConfig()).toThrow(/SECRET_ENCRYPTION_KEY is required/));
    withEnv({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: key.toString('hex') }, () => expect(loadConfig().secretKeys[0].equals(key)).toBe(true));
  });
});
