import { Pool, type PoolConfig } from 'pg';
import { traceStatements } from './trace';

/** What a pool serves: API requests get a short statement timeout, workers (and exports) a long one. */
export type PoolRole = 'api' | 'worker';

/** A whole number from 0 to `max` in environment variable `name` (`fallback` when unset or empty). */
function envWhole(name: string, fallback: number, unit: string, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`environment variable ${name} must be a whole number of ${unit} from 0 to ${max}, got ${raw}`);
  return n;
}

const envMs = (name: string, fallback: number) => envWhole(name, fallback, 'milliseconds');

/**
 * The time limits every connection runs under (milliseconds; 0 turns one off):
 * - `DATABASE_STATEMENT_TIMEOUT_MS` (10 000): one statement of an API request;
 * - `WORKER_STATEMENT_TIMEOUT_MS` (600 000): one statement of a worker (collection, ingestion);
 * - `EXPORT_STATEMENT_TIMEOUT_MS` (600 000): one statement of an export download (set per transaction);
 * - `DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS` (60 000): a transaction left open with nothing running.
 */
export function dbTimeouts() {
  return {
    api: envMs('DATABASE_STATEMENT_TIMEOUT_MS', 10_000),
    worker: envMs('WORKER_STATEMENT_TIMEOUT_MS', 600_000),
    export: envMs('EXPORT_STATEMENT_TIMEOUT_MS', 600_000),
    idleInTransaction: envMs('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000),
  };
}

/**
 * `DATABASE_API_PARALLEL_WORKERS` (0): PostgreSQL's `max_parallel_workers_per_gather` for API
 * connections. A request's statement shares the database's cores with every other request, so parallel
 * workers buy one request's latency with everyone's throughput; on the 2-core machine the planner's
 * parallel plan for a unified-cost analyze over 100k rows took 184 ms against 51 ms without (issue #14,
 * docs/decisions/performance.md "The request path"). Worker connections keep PostgreSQL's setting.
 */
export function apiParallelWorkers(): number {
  return envWhole('DATABASE_API_PARALLEL_WORKERS', 0, 'workers', 64);
}

export interface CreatePoolOptions extends PoolConfig {
  /** Sets the statement timeout (default `api`). */
  role?: PoolRole;
  /** Told of every connection error (idle or checked out); the pool replaces the connection by itself. */
  onError?: (err: Error) => void;
  /** Without `onError`: connection errors are logged here (`postgres connection error`, message and code only). */
  logger?: { warn(obj: object, msg: string): void };
}

/** Logs a pool's connection errors: the message and SQLSTATE / socket code, never the error object (or a URL). */
export function logConnectionErrors(logger: { warn(obj: object, msg: string): void }, what = 'postgres'): (err: Error) => void {
  return (err) => {
    const code = (err as { code?: unknown }).code;
    logger.warn({ err: String(err?.message ?? err).slice(0, 500), ...(typeof code === 'string' && { code }) }, `${what} connection error`);
  };
}

/**
 * One pg pool per app: Prisma (through the driver adapter) and the query DSL's raw SQL share it.
 * Every connection runs with a statement timeout (by role) and an idle-in-transaction timeout, and
 * has an `error` listener for its whole life: pg-pool listens only while a connection is idle, so a
 * database restart while one is checked out (a transaction, a cursor) would otherwise be an
 * unhandled `error` event and kill the process.
 */
export function createPool(connectionString: string, config: CreatePoolOptions = {}): Pool {
  const { role = 'api', logger, onError = logger && logConnectionErrors(logger), ...poolConfig } = config;
  const t = dbTimeouts();
  const pool = new Pool({
    connectionString,
    max: Number(process.env.DATABASE_POOL_MAX || 10),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    statement_timeout: role === 'worker' ? t.worker : t.api,
    idle_in_transaction_session_timeout: t.idleInTransaction,
    ...(role === 'api' && { options: `-c max_parallel_workers_per_gather=${apiParallelWorkers()}` }),
    ...poolConfig,
  });
  const report = (err: Error) => {
    try {
      onError?.(err);
    } catch {
      // a reporter's own failure must not become an unhandled error
    }
  };
  traceStatements(pool);
  // Each connection reports its own errors; the pool re-emits an idle one's too, which needs a
  // listener (or it throws) but would only report the same error twice.
  pool.on('error', () => {});
  // A connection that failed is done: pg may report its end a second time ("Connection terminated
  // unexpectedly" after the server's own message); only the first is told.
  pool.on('connect', (client) => {
    let failed = false;
    client.on('error', (err) => {
      if (failed) return;
      failed = true;
      report(err);
    });
  });
  return pool;
}
