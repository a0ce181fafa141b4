import type IORedis from 'ioredis';
import { DelayedError, type Job, type Processor } from 'bullmq';

/**
 * Fair sharing of a queue's slots between groups of jobs (tenants): at most `slots` jobs of one group
 * run at once, across every worker process of the queue. A job whose group holds its share goes back
 * to the queue, delayed, without spending an attempt, and the worker takes the next job: one tenant's
 * slow jobs cannot hold every slot while another tenant's wait.
 */
export interface FairShare<T> {
  /** The group a job belongs to (e.g. its domain_id). */
  group: (job: Job<T>) => string;
  /** Jobs of one group that may run at once, across the workers of the queue. */
  slots: number;
  /** A slot is renewed while its job runs; one not renewed for this long (its worker died) is free again. */
  leaseMs: number;
  /** How long a job refused a slot waits before it goes back to the queue (plus up to as much jitter). */
  retryDelayMs?: number;
}

// Slots are a sorted set per group: member the job id, score the lease's end (Redis' own clock, so the
// workers' clocks do not matter). Taking a slot drops lapsed leases first; a job that already holds one
// (its retry after a crash) takes it again. Everything in one script: two workers cannot both take the last slot.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  return 1
end
return 0`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

/** The Redis key of a group's slots. */
export function fairShareKey(prefix: string, queue: string, group: string): string {
  return `${prefix}:${queue}:fair:${group}`;
}

/** `processor`, run only when the job's group has a free slot (see FairShare); the slot is held while it runs. */
export function withFairShare<T, R>(processor: Processor<T, R>, share: FairShare<T>, o: { connection: IORedis; prefix: string; queue: string }): Processor<T, R> {
  const retryDelay = share.retryDelayMs ?? 1000;
  return async (job, token, signal) => {
    const key = fairShareKey(o.prefix, o.queue, share.group(job));
    const member = String(job.id);
    const got = await o.connection.eval(ACQUIRE, 1, key, member, share.slots, share.leaseMs);
    if (got !== 1) {
      await job.moveToDelayed(Date.now() + retryDelay + Math.floor(Math.random() * retryDelay), token);
      throw new DelayedError();
    }
    const renew = setInterval(() => void o.connection.eval(RENEW, 1, key, member, share.leaseMs).catch(() => {}), Math.max(100, Math.floor(share.leaseMs / 3)));
    try {
      return await processor(job, token, signal);
    } finally {
      clearInterval(renew);
      await o.connection.zrem(key, member).catch(() => {}); // else its lease lapses
    }
  };
}
