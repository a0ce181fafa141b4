import type Redis from 'ioredis';

/**
 * Attempts against one secret (a user's password, a user's TOTP codes), counted in Redis before the
 * secret is checked, so concurrent requests cannot race past the limit.
 *
 * One hash per key: `attempts` counts every attempt of the window, those still being checked
 * included; `failures` counts the ones that ended without success. `begin` adds the attempt and
 * decides on the value it returns, in one round trip: past `limit` the attempt is refused (and counts
 * as a failure) without the secret being checked. So at most `limit` checks can fail per window, however
 * many requests arrive at once.
 *
 * A success clears the failures that have ended and its own attempt, but never the attempts still in
 * flight: a success in the middle of a burst cannot hand the burst a fresh allowance.
 *
 * The window is `windowSeconds` from the first attempt, extended by every failed check (a block lasts
 * `windowSeconds` from the last failure); refused attempts do not extend it.
 */
export class AttemptCounter {
  constructor(
    private readonly redis: Redis,
    private readonly settings: () => { limit: number; windowSeconds: number },
  ) {}

  /** Counts the attempt; false when it is past the limit (refuse it without checking). */
  async begin(key: string): Promise<boolean> {
    const { limit, windowSeconds } = this.settings();
    const allowed = await this.redis.eval(BEGIN, 1, key, limit, windowSeconds);
    return allowed === 1;
  }

  /** The check failed: a failure of the window, which now lasts `windowSeconds` from here. */
  async fail(key: string): Promise<void> {
    await this.redis.multi().hincrby(key, 'failures', 1).expire(key, this.settings().windowSeconds).exec();
  }

  /** The check succeeded: the failures that have ended and this attempt are cleared. */
  async succeed(key: string): Promise<void> {
    await this.redis.eval(SUCCEED, 1, key);
  }

  /** The attempt neither failed nor succeeded (e.g. MFA is still to come): it stops counting. */
  async release(key: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, key);
  }
}

const BEGIN = `
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('HINCRBY', KEYS[1], 'failures', 1)
  return 0
end
return 1`;

const SUCCEED = `
local failures = tonumber(redis.call('HGET', KEYS[1], 'failures') or '0')
local n = redis.call('HINCRBY', KEYS[1], 'attempts', -(failures + 1))
if n <= 0 then redis.call('DEL', KEYS[1]) else redis.call('HSET', KEYS[1], 'failures', 0) end
return n`;

const RELEASE = `
if redis.call('HINCRBY', KEYS[1], 'attempts', -1) <= 0 then redis.call('DEL', KEYS[1]) end
return 0`;
