import { createLogger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { DirectoryClient, DirectoryPublisher, type DomainDirectory } from '@platform/directory';
import { createTempDatabase, createTestRedis, testVerifier } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type InventoryConfig } from './config';
import type { InventoryDeps } from './deps';

/** A real inventory app on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestInventory(overrides: Partial<InventoryConfig> = {}) {
  const db = await createTempDatabase({ app: 'inventory' });
  const r = createTestRedis('inventory');
  const prisma = createPrisma(PrismaClient, db.pool);
  const deps: InventoryDeps = {
    config: { ...loadConfig(), publicBaseUrl: 'http://gateway.test', ...overrides },
    logger: createLogger('inventory', 'silent'),
    pool: db.pool,
    reads: new ReadRouter({ primary: db.pool }),
    prisma,
    redis: r.redis,
    directory: new DirectoryClient(r.redis, r.prefix),
    verifier: testVerifier,
  };
  const publisher = new DirectoryPublisher(r.redis, r.prefix);
  return {
    app: createApp(deps),
    deps,
    /** Publishes a domain's projects and groups, as identity does. */
    publish: (domainId: string, dir: DomainDirectory) => publisher.publish(domainId, dir),
    async close() {
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}
