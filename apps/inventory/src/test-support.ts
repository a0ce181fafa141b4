import { createLogger } from '@platform/core';
import { createPrisma } from '@platform/db';
import { AccessRevocations, DirectoryClient, DirectoryPublisher, RevocationPublisher, type DomainDirectory } from '@platform/directory';
import { createPublicKey } from 'node:crypto';
import { TokenVerifier } from '@platform/auth';
import { createTempDatabase, createTestRedis, testKeys } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type InventoryConfig } from './config';
import type { InventoryDeps } from './deps';

/** A real inventory app on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestInventory(overrides: Partial<InventoryConfig> = {}) {
  const db = await createTempDatabase({ app: 'inventory' });
  const r = createTestRedis('inventory');
  const prisma = createPrisma(PrismaClient, db.pool);
  // As in production: what identity revokes stops here at once (tokens, export URLs).
  const revocations = new AccessRevocations(r.redis, { prefix: r.prefix });
  await revocations.start();
  const deps: InventoryDeps = {
    config: { ...loadConfig(), publicBaseUrl: 'http://gateway.test', ...overrides },
    logger: createLogger('inventory', 'silent'),
    pool: db.pool,
    prisma,
    redis: r.redis,
    directory: new DirectoryClient(r.redis, r.prefix),
    verifier: new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(revocations),
  };
  const publisher = new DirectoryPublisher(r.redis, r.prefix);
  return {
    app: createApp(deps),
    deps,
    /** Publishes a domain's projects and groups, as identity does. */
    publish: (domainId: string, dir: DomainDirectory) => publisher.publish(domainId, dir),
    /** Revokes as identity does (a user, or a workspace). */
    revocations: new RevocationPublisher(r.redis, r.prefix),
    async close() {
      revocations.stop();
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}
