import './telemetry';
import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { defaultRedisUrl, env } from '@platform/core';
import { platformVerifier } from '@platform/directory';
import { createRedis } from '@platform/queue';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import type { StatisticsDeps } from './deps';
import { builtinPlugins } from './plugin/builtin';
import { SecretBox, warnIfDevelopmentKey } from '@platform/secrets';

async function main() {
  const config = loadConfig();
  const logger = createLogger('statistics');
  warnIfDevelopmentKey(logger, 'storage secrets');
  if (config.migrateOnStart) migrateApp('statistics', config.databaseUrl);

  // The pool logs its connection errors and reconnects by itself: a Postgres restart answers 503 for
  // its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  // Redis only for identity's access revocations (libs/directory): tokens of disabled users stop here too.
  const redis = createRedis(env('REDIS_URL', defaultRedisUrl()), { maxRetriesPerRequest: 3, logger });
  const deps: StatisticsDeps = {
    config,
    logger,
    pool,
    prisma,
    verifier: platformVerifier(redis, logger),
    plugins: builtinPlugins(),
    secrets: new SecretBox(config.secretKeys),
  };

  serve(createApp(deps), {
    port: config.port,
    logger,
    service: 'statistics',
    onShutdown: async () => {
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('statistics', main);
