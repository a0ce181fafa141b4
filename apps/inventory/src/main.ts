import './telemetry';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { DirectoryClient, platformVerifier } from '@platform/directory';
import { runMain, serve } from '@platform/http';
import { createRedis } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';

async function main() {
  const config = loadConfig();
  const logger = createLogger('inventory');
  if (config.migrateOnStart) migrateApp('inventory', config.databaseUrl);

  // Every client logs its errors and reconnects by itself: a Postgres or Redis restart answers 503
  // for its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 3, logger });

  serve(
    createApp({ config, logger, pool, prisma, redis, directory: new DirectoryClient(redis), verifier: platformVerifier(redis, logger) }),
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
