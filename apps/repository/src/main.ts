import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { TokenVerifier, publicKeyFromEnv } from '@platform/auth';
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
  const deps: RepositoryDeps = { config, logger, pool, prisma, verifier: new TokenVerifier(publicKeyFromEnv()) };
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
    },
  });
}

runMain('repository', main);
