import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/**
 * A Redis connection whose keys live under a unique prefix for this test file, so files never
 * share state; `cleanup()` deletes the prefix's keys and closes the connection.
 */
export function createTestRedis(label = 'test'): { redis: Redis; prefix: string; url: string; cleanup(): Promise<void> } {
  const prefix = `t:${label}:${process.pid}:${randomBytes(4).toString('hex')}:`;
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2, lazyConnect: false });
  return {
    redis,
    prefix,
    url: TEST_REDIS_URL,
    async cleanup() {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}
