import { createLogger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { EndpointChanges } from '@platform/plugin';
import { createTempDatabase, createTestRedis, testVerifier, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type PluginConfig } from './config';
import type { PluginDeps } from './deps';

/** A real plugin app on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestPlugin(overrides: Partial<PluginConfig> = {}, logger = createLogger('plugin', 'silent')) {
  const db: TempDatabase = await createTempDatabase({ app: 'plugin' });
  const r = createTestRedis('plugin');
  const prisma = createPrisma(PrismaClient, db.pool);
  const deps: PluginDeps = {
    config: { ...loadConfig(), publicSupervisorDomainId: 'operator', ...overrides },
    logger,
    pool: db.pool,
    reads: new ReadRouter({ primary: db.pool }),
    prisma,
    redis: r.redis,
    verifier: testVerifier,
    changes: new EndpointChanges(r.redis, r.prefix),
  };
  return {
    app: createApp(deps),
    deps,
    db,
    redis: r,
    async close() {
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}
