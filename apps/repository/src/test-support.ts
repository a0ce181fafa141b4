import { createLogger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { createTempDatabase, testVerifier, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { loadConfig, type RepositoryConfig } from './config';
import type { RepositoryDeps } from './deps';
import { SchemaSyncScheduler } from './schema/scheduler';
import { SchemaService } from './schema/service';

/** A real repository app on a fresh database, for one test file. */
export async function createTestRepository(sync: Partial<RepositoryConfig['sync']> = {}) {
  const db: TempDatabase = await createTempDatabase({ app: 'repository' });
  const prisma = createPrisma(PrismaClient, db.pool);
  const base = loadConfig();
  const config = { ...base, sync: { ...base.sync, ...sync } };
  const deps: RepositoryDeps = { config, logger: createLogger('repository', 'silent'), pool: db.pool, reads: new ReadRouter({ primary: db.pool }), prisma, verifier: testVerifier };
  const schemas = new SchemaService(deps);
  return {
    app: createApp(deps, schemas),
    deps,
    db,
    scheduler: new SchemaSyncScheduler(deps, schemas),
    async close() {
      await prisma.$disconnect().catch(() => {});
      await db.drop();
    },
  };
}
