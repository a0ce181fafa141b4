import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { createPool, logConnectionErrors } from './pool';

/**
 * Read replicas (issue #21, docs/decisions/database.md "Read replicas").
 *
 * A ReadRouter sends a caller's reads (list, get, stat, analyze, export) to the replica of
 * `DATABASE_READ_URL` and everything else to the primary. The replica is used only while it is provably
 * fresh enough, and never for a caller whose last write it has not replayed yet:
 *
 * - Every `DATABASE_READ_CHECK_MS` a background check samples the primary's `pg_current_wal_lsn()` (at
 *   time t, taken before the query is sent: every commit completed before t lies at or below that LSN)
 *   and the replica's `pg_last_wal_replay_lsn()`. The replica has replayed every commit completed before
 *   `visibleThrough` = the latest sample time t whose LSN the replica has replayed. Its lag is
 *   `now - visibleThrough` (an idle primary's LSN stands still, so an idle replica shows no lag).
 * - The replica is healthy while its last check succeeded and its lag is at most
 *   `DATABASE_READ_MAX_LAG_MS`; otherwise (lagging, paused, down, not checked yet) reads go to the primary.
 * - A write operation records the time it ended for its caller (domain and user), in this process and,
 *   with Redis, for every replica of the app (a key that expires after the lag bound: past it, a
 *   healthy replica has replayed the write by definition). A caller's read goes to the replica only if
 *   the replica's `visibleThrough` is later than the caller's last write (plus `DATABASE_READ_CLOCK_SKEW_MS`
 *   for writes other processes recorded). When that cannot be known (Redis slow or down) the read goes
 *   to the primary.
 * - A read the replica fails for a reason of the connection (no SQLSTATE, class 08, 57P, a statement
 *   timeout, a recovery conflict) marks the replica down and runs again on the primary: a replica fault
 *   is never an error of the request.
 */

/** Who reads: an AuthContext fits (domainId, userId). */
export interface ReadCaller {
  domainId: string;
  userId?: string;
}

/** What the query DSL and the services run SQL on (a pg Pool fits). */
export interface ReadRunner {
  query<R extends QueryResultRow = any>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** The part of an ioredis client the router uses. */
export interface ReadRouterRedis {
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

export interface ReadRouterOptions {
  primary: Pool;
  /** The replica's pool (createReplicaPool); none: every read goes to the primary. */
  replica?: Pool;
  /** Shares callers' write times across the app's processes. */
  redis?: ReadRouterRedis;
  /** Key prefix in Redis (`<app>:` from fromEnv). */
  keyPrefix?: string;
  maxLagMs?: number;
  checkMs?: number;
  clockSkewMs?: number;
  /** How long a read waits for Redis before it goes to the primary. */
  redisTimeoutMs?: number;
  logger?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

export type ReplicaState = 'none' | 'unknown' | 'healthy' | 'lagging' | 'down';

const envInt = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`environment variable ${name} must be a whole number of milliseconds, got ${raw}`);
  return n;
};

/** The router's settings from the environment (milliseconds). */
export function readRouterSettings() {
  return {
    maxLagMs: envInt('DATABASE_READ_MAX_LAG_MS', 2_000),
    checkMs: envInt('DATABASE_READ_CHECK_MS', 500),
    clockSkewMs: envInt('DATABASE_READ_CLOCK_SKEW_MS', 100),
    connectTimeoutMs: envInt('DATABASE_READ_CONNECT_TIMEOUT_MS', 1_000),
    statementTimeoutMs: envInt('DATABASE_READ_STATEMENT_TIMEOUT_MS', 10_000),
  };
}

/**
 * The replica's pool: short connect timeout (a down replica costs a read at most this before the
 * primary answers), a statement timeout, an `error` listener on every connection (createPool).
 */
export function createReplicaPool(url: string, options: { logger?: { warn(obj: object, msg: string): void }; max?: number; connectTimeoutMs?: number; statementTimeoutMs?: number; applicationName?: string } = {}): Pool {
  const s = readRouterSettings();
  return createPool(url, {
    role: 'api',
    max: options.max ?? Number(process.env.DATABASE_POOL_MAX || 10),
    connectionTimeoutMillis: options.connectTimeoutMs ?? s.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? s.statementTimeoutMs,
    application_name: options.applicationName ?? 'read-replica',
    onError: options.logger ? logConnectionErrors(options.logger, 'read replica') : () => {},
  });
}

/** A pg_lsn's text ('16/B374D848') as a number that orders as the LSN does. */
export function lsnValue(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** The replica fails for a reason of its own (connection, shutdown, timeout, recovery conflict), not of the SQL. */
export function isReplicaFault(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true; // socket errors, pg-pool's connect timeout
  return code.startsWith('08') || code.startsWith('57P') || code === '57014' || code === '40001' || code === '53300';
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e) => (clearTimeout(t), reject(e)),
    );
  });

export class ReadRouter {
  readonly primary: Pool;
  readonly replica?: Pool;
  private readonly redis?: ReadRouterRedis;
  private readonly prefix: string;
  private readonly maxLagMs: number;
  private readonly checkMs: number;
  private readonly skewMs: number;
  private readonly redisTimeoutMs: number;
  private readonly logger?: ReadRouterOptions['logger'];
  /** Primary LSN samples, oldest first: (time before the query, LSN). */
  private samples: { t: number; lsn: bigint }[] = [];
  private visibleThrough = -Infinity;
  private checkedOk = false;
  private downSince: number | undefined;
  private readonly writes = new Map<string, number>();
  /** Clients made on the replica's pool (withClient), by the function that made them. */
  private readonly replicaClients = new Map<(pool: Pool) => unknown, unknown>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private lastState: ReplicaState = 'unknown';
  /** Reads served, by where (for tests and metrics). */
  readonly served = { replica: 0, primary: 0, fallback: 0 };

  constructor(options: ReadRouterOptions) {
    const s = readRouterSettings();
    this.primary = options.primary;
    this.replica = options.replica;
    this.redis = options.redis;
    this.prefix = `${options.keyPrefix ?? ''}read-after-write:`;
    this.maxLagMs = options.maxLagMs ?? s.maxLagMs;
    this.checkMs = options.checkMs ?? s.checkMs;
    this.skewMs = options.clockSkewMs ?? s.clockSkewMs;
    this.redisTimeoutMs = options.redisTimeoutMs ?? 200;
    this.logger = options.logger;
    if (this.replica) {
      this.timer = setInterval(() => void this.check(), this.checkMs);
      this.timer.unref();
      void this.check();
    }
  }

  /**
   * The router of an app from its environment: `DATABASE_READ_URL` (none: every read on the primary).
   */
  static fromEnv(primary: Pool, options: { app: string; redis?: ReadRouterRedis; logger?: ReadRouterOptions['logger']; url?: string }): ReadRouter {
    const url = options.url ?? process.env.DATABASE_READ_URL;
    const replica = url ? createReplicaPool(url, { logger: options.logger, applicationName: `${options.app}-read` }) : undefined;
    return new ReadRouter({ primary, replica, redis: options.redis, keyPrefix: `${options.app}:`, logger: options.logger });
  }

  /** The replica's state as of the last check. */
  state(now = Date.now()): ReplicaState {
    if (!this.replica) return 'none';
    if (this.downSince !== undefined) return 'down';
    if (!this.checkedOk) return 'unknown';
    return now - this.visibleThrough <= this.maxLagMs ? 'healthy' : 'lagging';
  }

  /** Milliseconds the replica is behind (Infinity before it was seen to replay anything we sampled). */
  lagMs(now = Date.now()): number {
    return now - this.visibleThrough;
  }

  /** One health check (the background loop calls it; tests may await it). */
  check(): Promise<void> {
    this.checking ??= this.runCheck().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async runCheck(): Promise<void> {
    const replica = this.replica;
    if (!replica) return;
    const bound = Math.max(this.checkMs * 4, 1_000);
    try {
      const t = Date.now();
      const { rows } = await withTimeout(this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'), bound);
      this.samples.push({ t, lsn: lsnValue(rows[0].lsn) });
    } catch {
      // the primary is down: the samples stand, the replica's state is judged by them
    }
    // Keep what can still matter: samples newer than the lag bound, and the newest older one.
    const horizon = Date.now() - this.maxLagMs * 2;
    while (this.samples.length > 2 && this.samples[1].t < horizon) this.samples.shift();
    try {
      const { rows } = await withTimeout(
        replica.query<{ recovery: boolean; lsn: string | null }>('SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS lsn'),
        bound,
      );
      const { recovery, lsn } = rows[0];
      if (!recovery) {
        // Not a standby (the primary itself, as in development): it sees every commit.
        this.visibleThrough = this.samples.at(-1)?.t ?? -Infinity;
      } else if (lsn) {
        const replayed = lsnValue(lsn);
        for (const s of this.samples) if (s.lsn <= replayed && s.t > this.visibleThrough) this.visibleThrough = s.t;
      }
      this.checkedOk = true;
      this.downSince = undefined;
    } catch (e) {
      this.markDown(e);
    }
    this.reportState();
  }

  private markDown(e: unknown) {
    if (this.downSince === undefined) {
      this.downSince = Date.now();
      this.logger?.warn({ err: String((e as Error)?.message ?? e).slice(0, 300) }, 'read replica down: reads go to the primary');
    }
    this.reportState();
  }

  private reportState() {
    const now = this.state();
    if (now !== this.lastState) {
      if (now === 'lagging') this.logger?.warn({ lag_ms: Math.round(this.lagMs()) }, 'read replica lags beyond DATABASE_READ_MAX_LAG_MS: reads go to the primary');
      else if (now === 'healthy') this.logger?.info?.({}, 'read replica healthy: reads go to it');
      this.lastState = now;
    }
  }

  private key(caller: ReadCaller) {
    return `${this.prefix}${caller.domainId}:${caller.userId ?? ''}`;
  }

  /**
   * Records that `caller` wrote (call it when a write operation ends, before its answer is sent): their
   * reads go to the primary until the replica has replayed it. Never throws.
   */
  async wrote(caller: ReadCaller | undefined, at = Date.now()): Promise<void> {
    if (!this.replica || !caller) return;
    const key = this.key(caller);
    this.writes.set(key, at);
    if (this.writes.size > 10_000) {
      const old = Date.now() - this.maxLagMs - this.skewMs;
      for (const [k, t] of this.writes) if (t < old) this.writes.delete(k);
    }
    if (!this.redis) return;
    try {
      await withTimeout(this.redis.set(key, String(at), 'PX', this.maxLagMs + this.skewMs + this.checkMs * 2), this.redisTimeoutMs);
    } catch {
      // another process may read from the replica early; this one will not
    }
  }

  /** The pool that serves `caller`'s read now: the replica when fresh enough for them, else the primary. */
  async pool(caller?: ReadCaller): Promise<Pool> {
    return (await this.useReplica(caller)) ? this.replica! : this.primary;
  }

  private async useReplica(caller?: ReadCaller): Promise<boolean> {
    if (!this.replica || this.state() !== 'healthy') return false;
    if (!caller) return true;
    const key = this.key(caller);
    const local = this.writes.get(key);
    if (local !== undefined && local >= this.visibleThrough) return false;
    if (!this.redis) return true;
    try {
      const shared = await withTimeout(this.redis.get(key), this.redisTimeoutMs);
      return shared === null || Number(shared) + this.skewMs < this.visibleThrough;
    } catch {
      return false;
    }
  }

  /**
   * What a read path runs its SQL on: `runList(reads.for(auth), ...)`. Each query goes to the pool
   * chosen for the caller; a replica fault marks the replica down and the query runs on the primary.
   */
  for(caller?: ReadCaller): ReadRunner {
    // No replica configured: the primary itself (no wrapper on the request path).
    if (!this.replica) return this.primary as unknown as ReadRunner;
    return {
      query: async (text: string, values?: unknown[]) => {
        if (await this.useReplica(caller)) {
          try {
            const r = await this.replica!.query(text, values as any[]);
            this.served.replica++;
            return r;
          } catch (e) {
            if (!isReplicaFault(e)) throw e;
            this.markDown(e);
            this.served.fallback++;
          }
        }
        this.served.primary++;
        return this.primary.query(text, values as any[]);
      },
    };
  }

  /**
   * A read through a client made from a pool, as a Prisma client is: `fn` gets `primaryClient`, or,
   * when the replica may serve `caller`, the client `make` builds on the replica's pool (made once per
   * `make`, on first use). The read fails on the replica for whatever reason: it runs again on the
   * primary (a read is idempotent; an error of the query itself comes back from the primary too).
   * Keep `fn` to the query: an error it throws by design would be run twice.
   */
  async withClient<C, T>(caller: ReadCaller | undefined, primaryClient: C, make: (pool: Pool) => C, fn: (client: C) => Promise<T>): Promise<T> {
    if (await this.useReplica(caller)) {
      let client = this.replicaClients.get(make) as C | undefined;
      if (client === undefined) {
        client = make(this.replica!);
        this.replicaClients.set(make, client);
      }
      try {
        const out = await fn(client);
        this.served.replica++;
        return out;
      } catch (e) {
        if (isReplicaFault((e as { cause?: unknown })?.cause ?? e)) this.markDown(e);
        this.served.fallback++;
      }
    }
    this.served.primary++;
    return fn(primaryClient);
  }

  /**
   * A connection for a read that needs one (a transaction, a cursor: an export's download): the
   * replica's when fresh enough for `caller` and reachable, else the primary's. Release it as any.
   */
  async connect(caller?: ReadCaller): Promise<PoolClient> {
    if (await this.useReplica(caller)) {
      try {
        const client = await this.replica!.connect();
        this.served.replica++;
        return client;
      } catch (e) {
        this.markDown(e);
        this.served.fallback++;
      }
    }
    this.served.primary++;
    return this.primary.connect();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const c of this.replicaClients.values()) await (c as { $disconnect?: () => Promise<void> }).$disconnect?.().catch(() => {});
    await this.checking?.catch(() => {});
    await this.replica?.end().catch(() => {});
  }
}
