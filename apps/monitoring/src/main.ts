import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { TokenVerifier, publicKeyFromEnv } from '@platform/auth';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import { createDeliveryQueue, createDirectoryRedis } from './queues';

async function main() {
  const config = loadConfig();
  const logger = createLogger('monitoring');
  if (config.migrateOnStart) migrateApp('monitoring', config.databaseUrl);

  const pool = createPool(config.databaseUrl);
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createDirectoryRedis(config.redisUrl);
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const { queue, connection, ready } = createDeliveryQueue(config.redisUrl, config.ingest.queue, config.ingest.queuePrefix);

  serve(createApp({ config, logger, pool, prisma, redis, redisPrefix: '', verifier: new TokenVerifier(publicKeyFromEnv()), queue, queueReady: ready }), {
    port: config.port,
    logger,
    service: 'monitoring',
    onShutdown: async () => {
      await queue.close().catch(() => {});
      connection.disconnect();
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('monitoring', main);
