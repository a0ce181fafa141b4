import './telemetry';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp, ReadRouter } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { platformVerifier } from '@platform/directory';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import { WebhookCopy } from './ingest/webhook-copy';
import { pluginDatabaseUrl, startPublishedPlugins } from '@platform/plugin';
import { createDeliveryQueue, createDirectoryRedis } from './queues';

async function main() {
  const config = loadConfig();
  const logger = createLogger('monitoring');
  if (config.migrateOnStart) migrateApp('monitoring', config.databaseUrl);

  // Every client logs its errors and reconnects by itself: a Postgres or Redis restart answers 503
  // for its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  const redis = createDirectoryRedis(config.redisUrl, logger);
  const { queue, connection, ready } = createDeliveryQueue(config.redisUrl, config.ingest.queue, config.ingest.queuePrefix, logger);
  // The webhooks' copy in Redis (the webhook URL reads it while PostgreSQL is down): republished from
  // PostgreSQL now and whenever Redis comes back, retried until PostgreSQL answers.
  const webhookCopy = new WebhookCopy(redis, pool, { logger });
  webhookCopy.start();

  // Published plugins: a version published for a domain serves its webhooks and data sources.
  // Published plugins: PLUGIN_DATABASE_URL, else platform_plugin on monitoring's own server.
  const remote = startPublishedPlugins(pluginDatabaseUrl(process.env, config.databaseUrl), redis, logger);

  const reads = ReadRouter.fromEnv(pool, { app: 'monitoring', redis, logger });
  serve(createApp({ config, logger, pool, reads, prisma, redis, redisPrefix: '', verifier: platformVerifier(redis, logger), queue, queueReady: ready, webhookCopy, plugins: remote }), {
    port: config.port,
    logger,
    service: 'monitoring',
    onShutdown: async () => {
      webhookCopy.stop();
      await remote.close();
      await queue.close().catch(() => {});
      connection.disconnect();
      await reads.close();
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('monitoring', main);
