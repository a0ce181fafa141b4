import { createTempDatabase, waitFor, type TempDatabase } from '@platform/testing';
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

  it("loads pg's Node sockets without touching fetch's Response, and leaves Response as it was", async () => {
    const { Socket } = await import('node:net');
    const { createRequire } = await import('node:module');
    const { getStream } = createRequire(__filename)('pg/lib/stream.js') as { getStream: (ssl: boolean) => InstanceType<typeof Socket> };
    const socket = getStream(false);
    expect(socket).toBeInstanceOf(Socket);
    socket.destroy();
    expect(typeof Response).toBe('function');
    expect(await new Response('ok').text()).toBe('ok');
  });

  it('readiness fails when Postgres is unreachable', async () => {
    const pool = createPool('postgresql://postgres@127.0.0.1:1/nowhere', { connectionTimeoutMillis: 500 });
    await expect(postgresCheck(pool)()).rejects.toBeDefined();
    await pool.end();
  });

  it('runs every connection under the statement timeout of its role', async () => {
    const api = createPool(db.url, { max: 1 });
    const worker = createPool(db.url, { max: 1, role: 'worker' });
    expect((await api.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('10s');
    expect((await worker.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('10min');
    expect((await api.query('SHOW idle_in_transaction_session_timeout')).rows[0].idle_in_transaction_session_timeout).toBe('1min');
    const slow = createPool(db.url, { max: 1, statement_timeout: 100 });
    const err = await slow.query('SELECT pg_sleep(2)').catch((e) => e);
    expect(err.code).toBe('57014');
    await Promise.all([api.end(), worker.end(), slow.end()]);
  });

  it('runs API connections without parallel workers (DATABASE_API_PARALLEL_WORKERS), worker connections with the server\'s setting', async () => {
    const api = createPool(db.url, { max: 1 });
    const worker = createPool(db.url, { max: 1, role: 'worker' });
    const server = (await worker.query('SELECT boot_val FROM pg_settings WHERE name = $1', ['max_parallel_workers_per_gather'])).rows[0].boot_val;
    expect((await api.query('SHOW max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather).toBe('0');
    expect((await worker.query('SHOW max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather).toBe(server);
    expect(server).not.toBe('0');
    await Promise.all([api.end(), worker.end()]);
    process.env.DATABASE_API_PARALLEL_WORKERS = '3';
    try {
      const three = createPool(db.url, { max: 1 });
      expect((await three.query('SHOW max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather).toBe('3');
      await three.end();
      process.env.DATABASE_API_PARALLEL_WORKERS = 'many';
      expect(() => createPool(db.url, { max: 1 })).toThrow(/DATABASE_API_PARALLEL_WORKERS/);
    } finally {
      delete process.env.DATABASE_API_PARALLEL_WORKERS;
    }
  });

  it('survives a checked-out connection being killed: the error is reported, not thrown at the process', async () => {
    const seen: Error[] = [];
    const pool = createPool(db.url, { max: 2, onError: (e) => seen.push(e) });
    const client = await pool.connect();
    const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    // The connection is held but idle (as a worker holding a transaction between statements).
    const admin = createPool(db.url, { max: 1 });
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(seen.length).toBeGreaterThan(0);
    client.release(seen[0]);
    // The pool replaces the connection by itself.
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await Promise.all([pool.end(), admin.end()]);
  });

  it('logs each connection error once, with its message and code and never the URL, and replaces the connection', async () => {
    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = { warn: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
    // trust auth ignores the password; it is there to be kept out of the log.
    const url = db.url.replace('postgres@', 'postgres:hunter2-secret@');
    const pool = createPool(url, { max: 2, logger });
    const admin = createPool(db.url, { max: 1 });
    // One connection idle in the pool, one checked out: both are cut, as by a database restart.
    const held = await pool.connect();
    const idle = await pool.connect();
    idle.release();
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
    await waitFor(() => lines.length >= 2, 5000, 'both errors logged', 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l.msg).toBe('postgres connection error');
      expect(l.obj).toEqual({ err: 'terminating connection due to administrator command', code: '57P01' });
    }
    expect(JSON.stringify(lines)).not.toContain('hunter2');
    held.release(new Error('cut'));
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await Promise.all([pool.end(), admin.end()]);
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
