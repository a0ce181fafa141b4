import { Pool, type PoolConfig } from 'pg';

/** pg-pool's internals this file relies on (pg-pool 3.x; checked at construction). */
interface PoolInternals {
  options: PoolConfig;
  ending: boolean;
  _pendingQueue: { callback: (err: Error | undefined, ...rest: unknown[]) => void; timedOut?: boolean }[];
  _idle: unknown[];
  _isFull(): boolean;
}

type Waiter = { item: PoolInternals['_pendingQueue'][number]; since: number };

/**
 * A pg Pool whose wait for a busy pool's connection is bounded by one sweep per pool rather than by a
 * timer per request.
 *
 * pg-pool arms a `setTimeout(connectionTimeoutMillis)` (and clears it) on every checkout that does not
 * open a new connection: under load, every query. That cost ~5 µs a request on identity's
 * project-group/get, 5 % of its CPU (issue #22: tools/bench/identity-project-group.mjs). Here a checkout
 * that waits in pg-pool's queue is queued without that timer and noted with its time; a sweep runs
 * every `sweepMs` (a quarter of the limit, at most 250 ms) while anything waits, and fails the waiters
 * older than the limit with pg-pool's own error ("timeout exceeded when trying to connect"), taken out
 * of the queue as pg-pool's timer would. A wait is thus bounded by the limit plus at most one sweep
 * interval. Opening a new connection keeps pg-pool's own connect timeout.
 *
 * Should pg-pool's internals ever change shape, the pool falls back to pg-pool's own timers.
 */
export class BoundedWaitPool extends Pool {
  private readonly waitMs: number;
  private readonly sweepMs: number;
  private readonly waiters: Waiter[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  private readonly usable: boolean;

  constructor(config: PoolConfig) {
    super(config);
    this.waitMs = config.connectionTimeoutMillis ?? 0;
    this.sweepMs = Math.max(10, Math.min(250, Math.floor(this.waitMs / 4)));
    const p = this as unknown as PoolInternals;
    this.usable = this.waitMs > 0 && Array.isArray(p._pendingQueue) && Array.isArray(p._idle) && typeof p._isFull === 'function' && typeof p.options === 'object';
  }

  override connect(): Promise<import('pg').PoolClient>;
  override connect(callback: (err: Error | undefined, client: import('pg').PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: import('pg').PoolClient | undefined, done: (release?: unknown) => void) => void): unknown {
    const p = this as unknown as PoolInternals;
    // Only a checkout that queues (the pool is full, or an idle connection is handed over on the next
    // tick) changes; one that opens a connection goes through pg-pool unchanged.
    if (!this.usable || p.ending || !(p._isFull() || p._idle.length)) return (super.connect as (cb?: unknown) => unknown)(callback);
    const queued = p._pendingQueue.length;
    p.options.connectionTimeoutMillis = 0;
    let result: unknown;
    try {
      result = (super.connect as (cb?: unknown) => unknown)(callback);
    } finally {
      p.options.connectionTimeoutMillis = this.waitMs;
    }
    if (p._pendingQueue.length === queued + 1) {
      this.waiters.push({ item: p._pendingQueue[queued], since: Date.now() });
      this.sweeper ??= setInterval(() => this.sweep(), this.sweepMs).unref();
    }
    return result;
  }

  /** Fails the waiters past the limit; stops once nothing waits. */
  private sweep() {
    const queue = (this as unknown as PoolInternals)._pendingQueue;
    const now = Date.now();
    const live = new Set(queue);
    let kept = 0;
    for (const w of this.waiters) {
      if (!live.has(w.item)) continue; // served (or failed) already
      if (now - w.since >= this.waitMs) {
        queue.splice(queue.indexOf(w.item), 1);
        w.item.timedOut = true;
        w.item.callback(new Error('timeout exceeded when trying to connect'));
      } else this.waiters[kept++] = w;
    }
    this.waiters.length = kept;
    if (!kept) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
