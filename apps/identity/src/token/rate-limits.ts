import type Redis from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError, errors } from '@platform/errors';
import type { RateLimitSetting } from '../config';

/**
 * Requests to token/issue per caller address and per (domain_id, user_id), in Redis so every replica
 * shares the count (fixed windows, rate-limiter-flexible's atomic INCR + EXPIRE script). Past a limit
 * the request is 429 ERROR_TOO_MANY_REQUESTS and carries `retryAfterSeconds` for the Retry-After header.
 *
 * Fail closed: a Redis error is not swallowed (no in-memory insurance limiter), so the request fails
 * as 503 through the shared dependency-fault mapping, as the lockout does without Redis.
 */
export class IssueRateLimits {
  private readonly perAddress?: RateLimiterRedis;
  private readonly perUser?: RateLimiterRedis;

  constructor(redis: Redis, prefix: string, settings: { perAddress: RateLimitSetting; perUser: RateLimitSetting }) {
    this.perAddress = limiter(redis, `${prefix}identity:rate:issue-address`, settings.perAddress);
    this.perUser = limiter(redis, `${prefix}identity:rate:issue-user`, settings.perUser);
  }

  async consumeAddress(clientIp: string): Promise<void> {
    if (this.perAddress) await consume(this.perAddress, clientIp || 'unknown');
  }

  async consumeUser(domainId: string, userId: string): Promise<void> {
    if (this.perUser) await consume(this.perUser, `{${domainId}}:${userId}`);
  }
}

function limiter(redis: Redis, keyPrefix: string, setting: RateLimitSetting): RateLimiterRedis | undefined {
  if (setting.points <= 0) return undefined;
  return new RateLimiterRedis({ storeClient: redis, keyPrefix, points: setting.points, duration: setting.seconds });
}

async function consume(limiter: RateLimiterRedis, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    const retryAfterSeconds = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
    throw tooManyRequests(retryAfterSeconds);
  }
}

export function tooManyRequests(retryAfterSeconds: number): ApiError {
  return errors.tooManyRequests('ERROR_TOO_MANY_REQUESTS', `Too many requests; retry in ${retryAfterSeconds} seconds.`, retryAfterSeconds);
}
