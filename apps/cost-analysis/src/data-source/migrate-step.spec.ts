import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { isSealedJson } from '@platform/secrets';
import { createTempDatabase, withEnv, type TempDatabase } from '@platform/testing';
import { loadConfig } from '../config';
import { openDataSourceSecret } from './secret';

/**
 * The backfill where deployments run it: tools/prisma/migrate.mjs (npm run migrate, the compose and
 * k8s migration steps) runs prisma/after-migrate.json's `secrets seal` with the app's built admin entry.
 */
const root = path.resolve(__dirname, '../../../..');
const key = randomBytes(32);
jest.setTimeout(60_000);

describe('the migration step seals data source secrets', () => {
  const dbs: TempDatabase[] = [];
  beforeAll(() => {
    const r = spawnSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), 'cost-analysis'], { cwd: root, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
  });
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  const migrate = (url: string, env: Record<string, string | undefined>) =>
    spawnSync(process.execPath, [path.join(root, 'tools/prisma/migrate.mjs'), '--app', 'cost-analysis', '--database-url', url], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, SECRET_ENCRYPTION_KEY: undefined, ...env },
    });

  it('seals a plain row of an existing database, once; production without the key fails', async () => {
    const db = await createTempDatabase({ app: 'cost-analysis' });
    dbs.push(db);
    await db.pool.query(
      `INSERT INTO data_source (domain_id, data_source_id, workspace_id, resource_group, name, secret_data) VALUES ('d1', 'ds-old', '*', 'DOMAIN', 'old', $1)`,
      [JSON.stringify({ token: 'tok-plain-771' })],
    );
    expect(migrate(db.url, { NODE_ENV: 'production' })).toMatchObject({ status: 1, stderr: expect.stringMatching(/SECRET_ENCRYPTION_KEY is required/) });

    const run = migrate(db.url, { SECRET_ENCRYPTION_KEY: key.toString('base64') });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/"msg":"secrets sealed".*"sealed":1/);
    const { rows } = await db.pool.query(`SELECT domain_id, data_source_id, secret_data, secret_data::text AS raw FROM data_source`);
    expect(isSealedJson(rows[0].secret_data)).toBe(true);
    expect(rows[0].raw).not.toContain('tok-plain-771');
    expect(openDataSourceSecret([key], rows[0])).toEqual({ token: 'tok-plain-771' });
    expect(migrate(db.url, { SECRET_ENCRYPTION_KEY: key.toString('base64') }).stdout).toMatch(/"sealed":0/);
  });

  it('skips it for a database the same run creates', async () => {
    const db = await createTempDatabase({ prefix: 'ca_fresh' });
    dbs.push(db);
    const run = migrate(db.url, { NODE_ENV: 'production' }); // no key needed: nothing to seal
    expect(run.status).toBe(0);
    expect(run.stdout).not.toMatch(/secrets sealed/);
  });

  it('refuses to start in production without SECRET_ENCRYPTION_KEY', () => {
    withEnv({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: undefined }, () => expect(() => loadConfig()).toThrow(/SECRET_ENCRYPTION_KEY is required/));
    withEnv({ NODE_ENV: 'production', SECRET_ENCRYPTION_KEY: key.toString('hex') }, () => expect(loadConfig().secretKeys[0].equals(key)).toBe(true));
  });
});
