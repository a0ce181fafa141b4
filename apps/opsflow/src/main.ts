import './telemetry';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { DirectoryClient, platformVerifier } from '@platform/directory';
import { runMain, serve } from '@platform/http';
import { createRedis } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import type { OpsflowDeps } from './deps';

async function main() {
  const config = loadConfig();
  const logger = createLogger('opsflow');
  if (!config.ingestTokens.length) logger.warn('OPSFLOW_INGEST_TOKENS is unset: event ingestion is off');
  if (config.migrateOnStart) migrateApp('opsflow', config.databaseUrl);

  // Every client logs its errors and reconnects by itself: a Postgres or Redis restart answers 503
  // for its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 3, logger });
  const deps: OpsflowDeps = {
    config,
    logger,
    pool,
    prisma,
    redis,
    verifier: platformVerifier(redis, logger),
    directory: new DirectoryClient(redis),
  };

  serve(createApp(deps), {
    port: config.port,
    logger,
    service: 'opsflow',
    onShutdown: async () => {
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('opsflow', main);
