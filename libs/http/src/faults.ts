import { ApiError, errors } from '@platform/errors';

/**
 * Failures of a dependency (PostgreSQL, Redis) rather than of the request: the database restarting or
 * unreachable, a connection dropped mid-query, the pool exhausted, Redis down. They leave as 503
 * `ERROR_SERVICE_UNAVAILABLE` (the caller retries), never as a 500, and recover by themselves: the
 * pool and the Redis client reconnect on the next request.
 */

// SQLSTATE: 08 connection exception, 57P01-57P05 shutdown / cannot connect now / idle session timeout,
// 53 insufficient resources (too many connections, out of memory, disk full), 40001/40P01 are retryable too.
// (08P01, a protocol violation, is a bug of ours, not an outage: it stays a 500.)
const PG_UNAVAILABLE = /^(080(00|01|03|04|06)|57P0[1-5]|53...|40001|40P01)$/;
// Node socket errors, and Prisma's "cannot reach / connection closed / pool timeout / operation timeout".
const CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
// Prisma driver-adapter error kinds (`meta.driverAdapterError.cause.kind`).
const KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TransactionWriteConflict']);
const MESSAGES = [
  /Connection terminated/i, // pg: the server went away mid-query, or connect timed out
  /timeout exceeded when trying to connect/i, // pg-pool: no connection within connectionTimeoutMillis
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /terminating connection/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /Connection is closed/i, // ioredis
  /Stream isn't writeable/i, // ioredis with enableOfflineQueue false
  /Reached the max retries per request limit/i, // ioredis MaxRetriesPerRequestError
  /getaddrinfo|connect ECONNREFUSED|read ECONNRESET|write EPIPE/i,
];

/** The statement timeout (57014 query_canceled): the request asked for more work than one statement may do. */
export function isStatementTimeout(err: unknown): boolean {
  return causes(err).some((e) => e.code === '57014' || kindOf(e) === 'postgres' && codeOfAdapter(e) === '57014');
}

interface ErrLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; code?: unknown } } };
}

function kindOf(e: ErrLike): unknown {
  return e.meta?.driverAdapterError?.cause?.kind ?? (e.cause as { kind?: unknown } | undefined)?.kind;
}
function codeOfAdapter(e: ErrLike): unknown {
  const c = e.meta?.driverAdapterError?.cause ?? (e.cause as { code?: unknown; originalCode?: unknown } | undefined);
  return c?.originalCode ?? c?.code;
}

/** The error and its causes (at most 5 deep: a cause chain is never trusted to end). */
function causes(err: unknown): ErrLike[] {
  const out: ErrLike[] = [];
  let e: unknown = err;
  for (let i = 0; i < 5 && e !== null && typeof e === 'object'; i++) {
    out.push(e as ErrLike);
    e = (e as ErrLike).cause;
  }
  return out;
}

export function isDependencyUnavailable(err: unknown): boolean {
  return causes(err).some((e) => {
    if (typeof e.code === 'string' && (CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))) return true;
    const kind = kindOf(e);
    if (typeof kind === 'string' && KINDS.has(kind)) return true;
    const adapterCode = codeOfAdapter(e);
    if (typeof adapterCode === 'string' && PG_UNAVAILABLE.test(adapterCode)) return true;
    if (e.name === 'MaxRetriesPerRequestError') return true;
    const message = typeof e.message === 'string' ? e.message.slice(0, 500) : '';
    return MESSAGES.some((m) => m.test(message));
  });
}

/** A dependency failure or a statement timeout as its envelope; undefined for anything else. */
export function dependencyFault(err: unknown): ApiError | undefined {
  if (isStatementTimeout(err)) {
    return new ApiError(503, 'ERROR_SERVICE_UNAVAILABLE', 'The database did not answer in time; retry later.');
  }
  if (isDependencyUnavailable(err)) return errors.unavailable('A dependency is unavailable; retry later.');
  return undefined;
}

/** The SQLSTATE of a PostgreSQL error, whether pg raised it or Prisma's driver adapter wrapped it. */
export function sqlState(err: unknown): string | undefined {
  for (const e of causes(err)) {
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && !e.code.startsWith('P')) return e.code;
    const adapter = codeOfAdapter(e);
    if (typeof adapter === 'string') return adapter;
  }
  return undefined;
}
