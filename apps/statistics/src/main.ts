import { createLogger } from '@platform/core';
import { createPool, createPrisma, migrateApp } from '@platform/db';
import { runMain, serve } from '@platform/http';
import { TokenVerifier, publicKeyFromEnv } from '@platform/auth';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig } from './config';
import type { StatisticsDeps } from './deps';
import { builtinPlugins } from './plugin/builtin';
import { SecretBox } from './secret/secret-box';

async function main() {
  const config = loadConfig();
  const logger = createLogger('statistics');
  if (!process.env.SECRET_ENCRYPTION_KEY) {
    logger.warn('SECRET_ENCRYPTION_KEY is unset: storage secrets are sealed with the public development key');
  }
  if (config.migrateOnStart) migrateApp('statistics', config.databaseUrl);

  const pool = createPool(config.databaseUrl);
  const prisma = createPrisma(PrismaClient, pool);
  const deps: StatisticsDeps = {
    config,
    logger,
    pool,
    prisma,
    verifier: new TokenVerifier(publicKeyFromEnv()),
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
    },
  });
}

runMain('statistics', main);
