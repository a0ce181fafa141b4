import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { createPool, isUniqueViolation, postgresCheck, withTransaction } from './index';

describe('db', () => {
  let db: TempDatabase;
  beforeAll(async () => {
    db = await createTempDatabase({ prefix: 'db' });
  });
  afterAll(() => db.drop());

  it('creates a pool whose readiness check reaches Postgres', async () => {
    const pool = createPool(db.url, { max: 2 });
    await expect(postgresCheck(pool)()).resolves.toBeDefined();
    await pool.query('CREATE TABLE t (id text primary key)');
    await pool.query("INSERT INTO t VALUES ('a')");
    const dup = await pool.query("INSERT INTO t VALUES ('a')").catch((e) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    await pool.end();
  });

  it('readiness fails when Postgres is unreachable', async () => {
    const pool = createPool('postgresql://postgres@127.0.0.1:1/nowhere', { connectionTimeoutMillis: 500 });
    await expect(postgresCheck(pool)()).rejects.toBeDefined();
    await pool.end();
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    const pool = createPool(db.url, { max: 2 });
    await pool.query('CREATE TABLE tx (n int)');
    expect(await withTransaction(pool, async (c) => (await c.query('INSERT INTO tx VALUES (1) RETURNING n')).rows[0].n)).toBe(1);
    await expect(
      withTransaction(pool, async (c) => {
        await c.query('INSERT INTO tx VALUES (2)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await pool.query('SELECT n FROM tx ORDER BY n')).rows).toEqual([{ n: 1 }]);
    expect(pool.idleCount + pool.waitingCount).toBeLessThanOrEqual(2);
    await pool.end();
  });
});
