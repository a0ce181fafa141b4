import Redis from 'ioredis';
import type { Logger } from '@platform/core';
import { createPool, createPrisma } from '@platform/db';
import { DirectoryClient } from '@platform/directory';
import { createQueue, createQueueConnection } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { COLLECT_QUEUE, type CollectTaskData } from './collector/queue';
import type { CostAnalysisConfig } from './config';
import type { CostAnalysisDeps } from './deps';
import { builtinPlugins } from './plugin/builtins';

/** The connections main.ts and worker.ts share the shape of, and how to close them. */
/** Everything but the token verifier (the worker verifies no tokens; main.ts adds it). */
export function createDeps(config: CostAnalysisConfig, logger: Logger) {
  const pool = createPool(config.databaseUrl);
  const prisma = createPrisma(PrismaClient, pool);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, enableOfflineQueue: false });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const queueConnection = createQueueConnection(config.redisUrl);
  queueConnection.on('error', (err) => logger.warn({ err: err.message }, 'queue redis error'));
  const queue = createQueue<CollectTaskData>(COLLECT_QUEUE, { connection: queueConnection, prefix: config.queuePrefix });
  const deps: Omit<CostAnalysisDeps, 'verifier'> = {
    config,
    logger,
    pool,
    prisma,
    redis,
    directory: new DirectoryClient(redis, config.directoryPrefix),
    queue,
    plugins: builtinPlugins(config),
  };
  const close = async () => {
    await queue.close().catch(() => {});
    await queueConnection.quit().catch(() => queueConnection.disconnect());
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
    redis.disconnect();
  };
  return { deps, queueConnection, close };
}
