import { createLogger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { DirectoryClient, DirectoryPublisher } from '@platform/directory';
import { createTempDatabase, createTestRedis, testVerifier, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type OpsflowConfig } from './config';
import type { OpsflowDeps } from './deps';

/** A real opsflow app on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestOpsflow(overrides: Partial<OpsflowConfig> = {}) {
  const db: TempDatabase = await createTempDatabase({ app: 'opsflow' });
  const r = createTestRedis('opsflow');
  const prisma = createPrisma(PrismaClient, db.pool);
  const deps: OpsflowDeps = {
    config: { ...loadConfig(), ...overrides },
    logger: createLogger('opsflow', 'silent'),
    pool: db.pool,
    reads: new ReadRouter({ primary: db.pool }),
    prisma,
    redis: r.redis,
    verifier: testVerifier,
    directory: new DirectoryClient(r.redis, r.prefix),
  };
  return {
    app: createApp(deps),
    deps,
    db,
    /** Publishes projects as identity does. */
    directory: new DirectoryPublisher(r.redis, r.prefix),
    async close() {
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}
