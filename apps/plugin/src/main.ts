import './telemetry';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp, ReadRouter } from '@platform/db';
import { platformVerifier } from '@platform/directory';
import { runMain, serve } from '@platform/http';
import { EndpointChanges } from '@platform/plugin';
import { createRedis } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import type { PluginDeps } from './deps';

async function main() {
  const config = loadConfig();
  const logger = createLogger('plugin');
  if (config.migrateOnStart) migrateApp('plugin', config.databaseUrl);

  // Every client logs its errors and reconnects by itself: a Postgres or Redis restart answers 503
  // for its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 3, logger });
  const deps: PluginDeps = {
    config,
    logger,
    pool,
    reads: ReadRouter.fromEnv(pool, { app: 'plugin', redis, logger }),
    prisma,
    redis,
    verifier: platformVerifier(redis, logger),
    changes: new EndpointChanges(redis),
  };

  serve(createApp(deps), {
    port: config.port,
    logger,
    service: 'plugin',
    onShutdown: async () => {
      await deps.reads.close();
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('plugin', main);
