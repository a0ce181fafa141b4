import type { Logger } from '@platform/core';
import { createPool, createPrisma, ReadRouter, type PoolRole } from '@platform/db';
import { DirectoryClient } from '@platform/directory';
import { createProducerConnection, createQueue, createQueueConnection, createRedis } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { COLLECT_QUEUE, type CollectTaskData } from './collector/queue';
import type { CostAnalysisConfig } from './config';
import type { CostAnalysisDeps } from './deps';
import { builtinPlugins } from './plugin/builtins';
import { pluginDatabaseUrl, startPublishedPlugins } from '@platform/plugin';

/**
 * The connections main.ts (`role` api) and worker.ts (`role` worker: long statements) share the shape
 * of, and how to close them. Everything but the token verifier (the worker verifies no tokens; main.ts
 * adds it). Every client logs its errors and reconnects by itself: a Postgres or Redis restart fails
 * what is in flight (503 for a request, a retry for a job), never the process.
 */
export function createDeps(config: CostAnalysisConfig, logger: Logger, role: PoolRole = 'api') {
  const pool = createPool(config.databaseUrl, { role, logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createRedis(config.redisUrl, { maxRetriesPerRequest: 3, logger });
  // The API only adds jobs (data-source/sync): its connection fails fast, and sync answers without
  // queueing while Redis is down (the worker's sweep queues the tasks later). The worker blocks on its own.
  // The API's reads go to DATABASE_READ_URL's replica when set; the worker reads what it writes (the primary).
  const reads = role === 'api' ? ReadRouter.fromEnv(pool, { app: 'cost-analysis', redis, logger }) : new ReadRouter({ primary: pool });
  const queueConnection = role === 'api' ? createProducerConnection(config.redisUrl, { logger }) : createQueueConnection(config.redisUrl, { logger });
  const queue = createQueue<CollectTaskData>(COLLECT_QUEUE, { connection: queueConnection, prefix: config.queuePrefix, logger });
  // Published plugins (docs/decisions/plugins.md "Cost data sources"): the plugin module's table read on
  // a small pool of its own, cached by the resolver (dropped on every publish), called with one set of
  // gRPC clients (libs/plugin startPublishedPlugins).
  const published = startPublishedPlugins(pluginDatabaseUrl(), redis, logger);
  const deps: Omit<CostAnalysisDeps, 'verifier'> = {
    config,
    logger,
    pool,
    reads,
    prisma,
    redis,
    directory: new DirectoryClient(redis, config.directoryPrefix),
    queue,
    plugins: builtinPlugins(config).useRemote({ resolver: published.resolver, clients: published.clients, stream: { timeoutMs: config.limits.taskTimeoutMs } }),
    clock: () => new Date(),
  };
  const close = async () => {
    await published.close();
    await queue.close().catch(() => {});
    await queueConnection.quit().catch(() => queueConnection.disconnect());
    await reads.close();
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
    redis.disconnect();
  };
  return { deps, queueConnection, close };
}
