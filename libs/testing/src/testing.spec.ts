import { generateSigningKeys, TokenSigner, TokenVerifier } from '@platform/auth';
import net from 'node:net';
import { Client } from 'pg';
import { bearer, createTempDatabase, createTestRedis, mintToken, startPlatform, testVerifier, waitFor, withEnv } from './index';

const ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
async function databaseExists(name: string) {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await c.end();
  }
}

describe('testing fixtures', () => {
  it('makes a fresh empty database and drops it', async () => {
    const db = await createTempDatabase({ prefix: 'fixture' });
    await db.pool.query('CREATE TABLE t (x int)');
    expect(await databaseExists(db.name)).toBe(true);
    await db.drop();
    expect(await databaseExists(db.name)).toBe(false);
  });

  it('makes migrated databases for an app that do not share state', async () => {
    const [a, b] = await Promise.all([createTempDatabase({ app: 'identity' }), createTempDatabase({ app: 'identity' })]);
    try {
      await a.pool.query("INSERT INTO domain (domain_id, name) VALUES ('d', 'd')");
      expect((await a.pool.query('SELECT count(*)::int AS n FROM domain')).rows[0].n).toBe(1);
      expect((await b.pool.query('SELECT count(*)::int AS n FROM domain')).rows[0].n).toBe(0);
      const applied = await a.pool.query('SELECT migration_name FROM _prisma_migrations');
      expect(applied.rowCount).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('isolates Redis keys under a prefix and removes them', async () => {
    const r = createTestRedis('fixture');
    await r.redis.set(`${r.prefix}k`, 'v');
    expect(await r.redis.get(`${r.prefix}k`)).toBe('v');
    const probe = createTestRedis('probe');
    await r.cleanup();
    expect(await probe.redis.get(`${r.prefix}k`)).toBeNull();
    await probe.cleanup();
  });

  it('mints tokens the test verifier accepts', async () => {
    const ctx = await testVerifier.authenticate(await mintToken({ roleType: 'DOMAIN_ADMIN', domainId: 'd9' }));
    expect(ctx).toMatchObject({ domainId: 'd9', roleType: 'DOMAIN_ADMIN', scope: 'DOMAIN', workspaceId: '' });
    expect(await bearer()).toMatch(/^Bearer ey/);
  });

  it('mints tokens with another key (a launched platform\'s)', async () => {
    const keys = generateSigningKeys();
    const token = await mintToken({ roleType: 'WORKSPACE_MEMBER' }, new TokenSigner(keys.privateKey));
    expect(await new TokenVerifier(keys.publicKey).authenticate(token)).toMatchObject({ roleType: 'WORKSPACE_MEMBER', workspaceId: 'workspace-test' });
    await expect(testVerifier.authenticate(token)).rejects.toThrow();
  });
});

describe('startPlatform', () => {
  it('refuses to start on a port something else listens on, before starting anything', async () => {
    const other = net.createServer();
    await new Promise<void>((r) => other.listen(31_900, r));
    try {
      // identity's standard port 8101 + 23799 = 31900
      await expect(startPlatform({ portOffset: 23_799, redisUrl: 'redis://127.0.0.1:6379/10', apps: ['identity'], build: false })).rejects.toThrow(
        'port 31900 (identity) is already in use',
      );
    } finally {
      await new Promise((r) => other.close(r));
    }
  });
});

describe('waitFor', () => {
  it('answers the first truthy value and names what it waited for on timeout', async () => {
    let n = 0;
    await expect(waitFor(() => (++n >= 3 ? `done after ${n}` : undefined), 2000, 'three calls', 5)).resolves.toBe('done after 3');
    await expect(waitFor(() => false, 50, 'never', 5)).rejects.toThrow('timed out waiting for never');
  });

  it('withEnv sets and unsets variables for the call only, also when it throws', () => {
    process.env.WITH_ENV_A = 'before';
    delete process.env.WITH_ENV_B;
    expect(withEnv({ WITH_ENV_A: undefined, WITH_ENV_B: 'set' }, () => [process.env.WITH_ENV_A, process.env.WITH_ENV_B])).toEqual([undefined, 'set']);
    expect(() => withEnv({ WITH_ENV_A: 'x' }, () => { throw new Error('boom'); })).toThrow('boom');
    expect([process.env.WITH_ENV_A, process.env.WITH_ENV_B]).toEqual(['before', undefined]);
    delete process.env.WITH_ENV_A;
  });
});
