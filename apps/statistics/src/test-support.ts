import { createLogger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { createTempDatabase, testVerifier, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type StatisticsConfig } from './config';
import type { StatisticsDeps } from './deps';
import { builtinPlugins } from './plugin/builtin';
import { SecretBox } from '@platform/secrets';

/** A real statistics app on a fresh database, for one test file. */
export async function createTestStatistics(overrides: Partial<StatisticsConfig> = {}) {
  const db: TempDatabase = await createTempDatabase({ app: 'statistics' });
  const prisma = createPrisma(PrismaClient, db.pool);
  const config = { ...loadConfig(), ...overrides };
  const deps: StatisticsDeps = {
    config,
    logger: createLogger('statistics', 'silent'),
    pool: db.pool,
    reads: new ReadRouter({ primary: db.pool }),
    prisma,
    verifier: testVerifier,
    plugins: builtinPlugins(),
    secrets: new SecretBox(config.secretKeys),
  };
  return {
    app: createApp(deps),
    deps,
    db,
    prisma,
    async close() {
      await prisma.$disconnect().catch(() => {});
      await db.drop();
    },
  };
}
