import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { BoundedWaitPool, createPool } from './index';

describe('BoundedWaitPool: a busy pool bounds the wait for a connection without a timer per checkout', () => {
  let db: TempDatabase;
  beforeAll(async () => {
    db = await createTempDatabase({ prefix: 'poolwait' });
  });
  afterAll(() => db.drop());

  it('createPool makes one', async () => {
    const pool = createPool(db.url, { max: 1 });
    expect(pool).toBeInstanceOf(BoundedWaitPool);
    await pool.end();
  });

  it('a checkout waiting on a full pool fails after the limit (plus at most one sweep), with pg-pool\'s error, and leaves the queue', async () => {
    const pool = createPool(db.url, { max: 1, connectionTimeoutMillis: 300 });
    const held = await pool.connect();
    const t0 = Date.now();
    const waiting = pool.connect().then(
      () => 'served',
      (e: Error) => e.message,
    );
    const viaQuery = pool.query('SELECT 1').then(
      () => 'served',
      (e: Error) => e.message,
    );
    expect(pool.waitingCount).toBe(2);
    expect(await waiting).toBe('timeout exceeded when trying to connect');
    expect(await viaQuery).toBe('timeout exceeded when trying to connect');
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(300 + 75 + 200); // the limit, one sweep (75 ms here), scheduling slack
    expect(pool.waitingCount).toBe(0);
    held.release();
    // The pool is whole: the connection goes to the next checkout, not to a waiter that gave up.
    expect((await pool.query('SELECT 2 AS n')).rows[0].n).toBe(2);
    expect(pool.totalCount).toBe(1);
    await pool.end();
  });

  it('a waiter served before the limit gets its connection, and nothing fails later', async () => {
    const pool = createPool(db.url, { max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    const waiting = pool.query('SELECT 3 AS n');
    setTimeout(() => held.release(), 50);
    expect((await waiting).rows[0].n).toBe(3);
    await new Promise((r) => setTimeout(r, 400)); // past the limit: the sweep finds nothing to fail
    expect((await pool.query('SELECT 4 AS n')).rows[0].n).toBe(4);
    await pool.end();
  });

  it('many concurrent queries on a small pool all run, each once', async () => {
    const pool = createPool(db.url, { max: 2, connectionTimeoutMillis: 5000 });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 200 }, (_, i) => pool.query('SELECT $1::int AS i', [i]).then((r) => order.push(r.rows[0].i))));
    expect(order).toHaveLength(200);
    expect(new Set(order).size).toBe(200);
    expect(pool.waitingCount).toBe(0);
    await pool.end();
  });
});
