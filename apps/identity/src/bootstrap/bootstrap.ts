import { generateSecret, type Logger } from '@platform/core';
import type { Pool } from '@platform/db';
import type { PrismaClient } from '../generated/prisma/client';
import { AdminService } from '../admin/service';
import { BOOTSTRAP_EFFECTS } from '../directory/effects';
import { DomainRepository } from '../domain/repository';
import { UserRepository } from '../user/repository';
import { WorkspaceRepository } from '../workspace/repository';
import type { IdentityConfig } from '../config';

/**
 * Ensures the bootstrap domain, workspace and DOMAIN_ADMIN user. Idempotent: what exists is left as
 * it is (a restart changes nothing). When BOOTSTRAP_PASSWORD is unset, a generated password is printed
 * once, when the user is first created.
 */
export async function bootstrap(db: { prisma: PrismaClient; pool: Pool }, config: IdentityConfig['bootstrap'], logger: Logger, print: (s: string) => unknown = (s) => process.stdout.write(s)) {
  // Replicas starting together on a fresh database: one bootstraps, the others wait for it and then
  // find everything there (a session-level advisory lock on a connection of its own).
  const lock = await db.pool.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', ['identity:bootstrap']);
    await bootstrapLocked(db, config, logger, print);
  } finally {
    await lock.query('SELECT pg_advisory_unlock(hashtext($1))', ['identity:bootstrap']).catch(() => {});
    lock.release();
  }
}

async function bootstrapLocked(db: { prisma: PrismaClient; pool: Pool }, config: IdentityConfig['bootstrap'], logger: Logger, print: (s: string) => unknown) {
  const admin = new AdminService(db, BOOTSTRAP_EFFECTS);
  const { domainId, workspaceId, userId } = config;
  if (!(await new DomainRepository(db.prisma).find(domainId))) {
    await admin.createDomain({ domainId, name: domainId });
    logger.info({ domain_id: domainId }, 'bootstrap domain created');
  }
  if (!(await new WorkspaceRepository(db.prisma, db.pool).find(domainId, workspaceId))) {
    await admin.createWorkspace({ domainId, workspaceId, name: workspaceId });
    logger.info({ workspace_id: workspaceId }, 'bootstrap workspace created');
  }
  if (!(await new UserRepository(db.prisma).find(domainId, userId))) {
    const password = config.password ?? generateSecret(18);
    await admin.createUser({ domainId, userId, password, name: 'Administrator', roleType: 'DOMAIN_ADMIN' });
    logger.info({ user_id: userId }, 'bootstrap admin created');
    if (!config.password) {
      print(`\n  Bootstrap admin created: domain_id=${domainId} user_id=${userId} password=${password}\n  (printed once; set BOOTSTRAP_PASSWORD to choose it)\n\n`);
    }
  }
}

/**
 * Whether `bootstrap` has anything to create: one SQL statement on the pool, so that a restart (the
 * records exist) does not wait for Prisma's first query, which compiles its query compiler (~150 ms),
 * before listening (issue #14). When it answers true, `bootstrap` does the work through Prisma.
 */
export async function bootstrapNeeded(pool: Pool, config: IdentityConfig['bootstrap']): Promise<boolean> {
  const { rows } = await pool.query<{ ready: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM domain WHERE domain_id = $1)
        AND EXISTS (SELECT 1 FROM workspace WHERE domain_id = $1 AND workspace_id = $2)
        AND EXISTS (SELECT 1 FROM "user" WHERE domain_id = $1 AND user_id = $3) AS ready`,
    [config.domainId, config.workspaceId, config.userId],
  );
  return !rows[0].ready;
}
