import { Writable } from 'node:stream';
import Redis from 'ioredis';
import { Pool } from 'pg';
import request from 'supertest';
import { createLogger } from '@platform/core';
import { createTempDatabase, type TempDatabase } from '@platform/testing';
import { createServiceApp, operation, request as requestSchema, Empty } from './index';
import { dependencyFault } from './faults';

// Real failures of real clients, each answered as 503 ERROR_SERVICE_UNAVAILABLE, never 500.
describe('dependency faults', () => {
  let db: TempDatabase;
  let live: Pool;
  const unreachable = new Pool({ connectionString: 'postgresql://postgres@127.0.0.1:1/nowhere', connectionTimeoutMillis: 500 });
  unreachable.on('error', () => {});
  const redisDown = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
  redisDown.on('error', () => {});

  beforeAll(async () => {
    db = await createTempDatabase({ prefix: 'faults' });
    live = new Pool({ connectionString: db.url, max: 2 });
    live.on('error', () => {});
  });
  afterAll(async () => {
    await Promise.all([live.end(), unreachable.end()]);
    redisDown.disconnect();
    await db.drop();
  });

  const app = () =>
    createServiceApp({
      service: 'faults',
      logger: createLogger('faults', 'silent'),
      operations: [
        operation({ path: '/faults/v1/pg/down', access: 'public', schema: requestSchema({}), response: Empty, handler: () => unreachable.query('SELECT 1') }),
        operation({
          path: '/faults/v1/pg/killed',
          access: 'public',
          schema: requestSchema({}),
          response: Empty, handler: async () => {
            const c = await live.connect();
            try {
              const pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
              const killer = new Pool({ connectionString: db.url, max: 1 });
              setTimeout(() => killer.query('SELECT pg_terminate_backend($1)', [pid]).finally(() => killer.end()), 100);
              await c.query('SELECT pg_sleep(5)');
            } finally {
              c.release(true);
            }
          },
        }),
        operation({ path: '/faults/v1/pg/timeout', access: 'public', schema: requestSchema({}), response: Empty, handler: () => live.query("SET statement_timeout = 50; SELECT pg_sleep(1)") }),
        operation({ path: '/faults/v1/redis/down', access: 'public', schema: requestSchema({}), response: Empty, handler: () => redisDown.get('x') }),
      ],
    });

  it.each(['/faults/v1/pg/down', '/faults/v1/pg/killed', '/faults/v1/pg/timeout', '/faults/v1/redis/down'])('%s is a 503', async (path) => {
    const res = await request(app()).post(path).send({});
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
    expect(JSON.stringify(res.body)).not.toMatch(/ECONN|pg_|at .*\.js/);
  });

  it('logs an outage once per 30 s with its first line only, not once per request', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
    const a = createServiceApp({
      service: 'faults',
      logger: createLogger('faults', 'info', sink),
      operations: [
        operation({
          path: '/faults/v1/down',
          access: 'public',
          schema: requestSchema({}),
          response: Empty, handler: () => {
            throw Object.assign(new Error("Can't reach database server\n  at /app/src/thing.ts:12\n  > 12 | prisma.x.find()"), { code: 'P1001' });
          },
        }),
      ],
    });
    for (let i = 0; i < 5; i++) expect((await request(a).post('/faults/v1/down').send({})).status).toBe(503);
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'dependency unavailable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].err).toBe("Can't reach database server");
  });

  it('recognises Prisma driver-adapter errors and causes, and leaves other errors alone', () => {
    expect(dependencyFault({ code: 'P1001', message: "Can't reach database server" })?.status).toBe(503);
    expect(dependencyFault({ name: 'DriverAdapterError', cause: { kind: 'ConnectionClosed' } })?.status).toBe(503);
    expect(dependencyFault({ meta: { driverAdapterError: { cause: { kind: 'postgres', originalCode: '57P01' } } } })?.status).toBe(503);
    expect(dependencyFault(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }))?.status).toBe(503);
    expect(dependencyFault(new Error('something else'))).toBeUndefined();
    expect(dependencyFault({ code: '23505' })).toBeUndefined();
  });
});
