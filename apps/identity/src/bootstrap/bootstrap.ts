import { generateSecret, type Logger } from '@platform/core';
import type { PrismaClient } from '../generated/prisma/client';
import { AdminService } from '../admin/service';
import type { IdentityConfig } from '../config';

/**
 * Ensures the bootstrap domain, workspace and DOMAIN_ADMIN user. Idempotent: what exists is left as
 * it is (a restart changes nothing). When BOOTSTRAP_PASSWORD is unset, a generated password is printed
 * once, when the user is first created.
 */
export async function bootstrap(prisma: PrismaClient, config: IdentityConfig['bootstrap'], logger: Logger, print: (s: string) => unknown = (s) => process.stdout.write(s)) {
  const admin = new AdminService(prisma);
  const { domainId, workspaceId, userId } = config;
  if (!(await prisma.domain.findUnique({ where: { domain_id: domainId } }))) {
    await admin.createDomain({ domainId, name: domainId });
    logger.info({ domain_id: domainId }, 'bootstrap domain created');
  }
  if (!(await prisma.workspace.findUnique({ where: { domain_id_workspace_id: { domain_id: domainId, workspace_id: workspaceId } } }))) {
    await admin.createWorkspace({ domainId, workspaceId, name: workspaceId });
    logger.info({ workspace_id: workspaceId }, 'bootstrap workspace created');
  }
  if (!(await prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: domainId, user_id: userId } } }))) {
    const password = config.password ?? generateSecret(18);
    await admin.createUser({ domainId, userId, password, name: 'Administrator', roleType: 'DOMAIN_ADMIN' });
    logger.info({ user_id: userId }, 'bootstrap admin created');
    if (!config.password) {
      print(`\n  Bootstrap admin created: domain_id=${domainId} user_id=${userId} password=${password}\n  (printed once; set BOOTSTRAP_PASSWORD to choose it)\n\n`);
    }
  }
}
