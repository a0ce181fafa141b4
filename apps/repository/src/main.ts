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
import type { RepositoryDeps } from './deps';
import { SchemaSyncScheduler } from './schema/scheduler';
import { SchemaService } from './schema/service';

async function main() {
  const config = loadConfig();
  const logger = createLogger('repository');
  if (config.migrateOnStart) migrateApp('repository', config.databaseUrl);

  // The pool logs its connection errors and reconnects by itself: a Postgres restart answers 503 for
  // its duration (and /readyz 503), never takes the process down.
  const pool = createPool(config.databaseUrl, { logger });
  const prisma = createPrisma(PrismaClient, pool);
  // Redis only for identity's access revocations (libs/directory): tokens of disabled users stop here too.
  const redis = createRedis(env('REDIS_URL', defaultRedisUrl()), { maxRetriesPerRequest: 3, logger });
  const deps: RepositoryDeps = { config, logger, pool, prisma, verifier: platformVerifier(redis, logger) };
  const schemas = new SchemaService(deps);
  const scheduler = new SchemaSyncScheduler(deps, schemas);
  scheduler.start();

  serve(createApp(deps, schemas), {
    port: config.port,
    logger,
    service: 'repository',
    onShutdown: async () => {
      await scheduler.stop();
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  });
}

runMain('repository', main);
