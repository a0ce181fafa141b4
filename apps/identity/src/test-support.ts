import { createLogger, type Logger } from '@platform/core';
import { createPrisma, ReadRouter } from '@platform/db';
import { createPublicKey } from 'node:crypto';
import { TokenVerifier } from '@platform/auth';
import { AccessRevocations } from '@platform/directory';
import { createTempDatabase, createTestRedis, testKeys, testSigner, type TempDatabase } from '@platform/testing';
import { PrismaClient } from './generated/prisma/client';
import { createApp } from './app';
import { AdminService } from './admin/service';
import { RedisEffects } from './directory/effects';
import { loadConfig, type IdentityConfig } from './config';
import type { IdentityDeps } from './deps';

/** A real identity app on a fresh database and an isolated Redis prefix, for one test file. */
export async function createTestIdentity(overrides: Partial<IdentityConfig> = {}, o: { logger?: Logger } = {}) {
  const db: TempDatabase = await createTempDatabase({ app: 'identity' });
  const r = createTestRedis('identity');
  const prisma = createPrisma(PrismaClient, db.pool);
  const config = { ...loadConfig(), ...overrides };
  // As in production: access tokens that identity revokes stop working in this app at once.
  const revocations = new AccessRevocations(r.redis, { prefix: r.prefix });
  await revocations.start();
  const verifier = new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(revocations);
  const deps: IdentityDeps = {
    config,
    logger: o.logger ?? createLogger('identity', 'silent'),
    pool: db.pool,
    reads: new ReadRouter({ primary: db.pool }),
    prisma,
    redis: r.redis,
    redisPrefix: r.prefix,
    signer: testSigner,
    verifier,
  };
  const app = createApp(deps);
  // Like the admin CLI, changes made through this admin republish the directory and revoke.
  const effects = new RedisEffects(deps);
  const admin = new AdminService(deps, effects);
  return {
    app,
    deps,
    admin,
    effects,
    prisma,
    databaseUrl: db.url,
    redisUrl: r.url,
    revocations,
    async close() {
      revocations.stop();
      await prisma.$disconnect().catch(() => {});
      await r.cleanup();
      await db.drop();
    },
  };
}

/** A domain with a workspace, a domain admin, an owner and a member (all with password "password-1"). */
export async function seedDomain(admin: AdminService, domainId: string, workspaces = ['ws-1']) {
  await admin.createDomain({ domainId, name: domainId });
  for (const w of workspaces) await admin.createWorkspace({ domainId, workspaceId: w, name: w });
  await admin.createUser({ domainId, userId: 'admin', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
  await admin.createUser({ domainId, userId: 'owner', password: 'password-1', roleType: 'WORKSPACE_OWNER', workspaceId: workspaces[0] });
  await admin.createUser({ domainId, userId: 'member', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: workspaces[0] });
  await admin.createUser({ domainId, userId: 'member2', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: workspaces[0] });
  await admin.createUser({ domainId, userId: 'loner', password: 'password-1' });
}
