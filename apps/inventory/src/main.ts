import Redis from 'ioredis';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { DirectoryClient } from '@platform/directory';
import { runMain, serve } from '@platform/http';
import { TokenVerifier, publicKeyFromEnv } from '@platform/auth';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';

async function main() {
  const config = loadConfig();
  const logger = createLogger('inventory');
  if (config.migrateOnStart) migrateApp('inventory', config.databaseUrl);

  const pool = createPool(config.databaseUrl);
  const prisma = createPrisma(PrismaClient, pool);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: false });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));

  serve(
    createApp({ config, logger, pool, prisma, redis, directory: new DirectoryClient(redis), verifier: new TokenVerifier(publicKeyFromEnv()) }),
    {
      port: config.port,
      logger,
      service: 'inventory',
      onShutdown: async () => {
        await prisma.$disconnect().catch(() => {});
        await pool.end().catch(() => {});
        redis.disconnect();
      },
    },
  );
}

runMain('inventory', main);
