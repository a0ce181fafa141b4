import { errors } from '@platform/errors';
import type { PrismaClient, Prisma } from './generated/prisma/client';

// Who belongs to a workspace (a role binding there, or DOMAIN_ADMIN), and the project and group users
// who no longer do.

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Users who belong to a workspace: a role binding there, or DOMAIN_ADMIN (who acts in every workspace).
 * The first user of `users` who does not is ERROR_NOT_FOUND naming them (project and group users).
 */
export async function checkWorkspaceUsers(db: Db, domainId: string, workspaceId: string, users: string[]) {
  const bindings = await db.roleBinding.findMany({
    where: { domain_id: domainId, user_id: { in: users }, OR: [{ workspace_id: workspaceId }, { role_type: 'DOMAIN_ADMIN' }] },
    select: { user_id: true },
  });
  const known = new Set(bindings.map((b) => b.user_id));
  const missing = users.find((u) => !known.has(u));
  if (missing) throw errors.notFound('user_id', missing);
}

/**
 * Takes `userId` out of the users of every project and project group of a workspace they no longer
 * belong to (no role binding there and not DOMAIN_ADMIN): after a role binding or the user is deleted.
 * Answers whether anything changed (the directory must then be republished).
 */
export async function pruneMemberships(tx: Prisma.TransactionClient, domainId: string, userId: string): Promise<boolean> {
  let changed = 0;
  for (const table of ['project', 'project_group']) {
    changed += await tx.$executeRawUnsafe(
      `UPDATE ${table} t SET users = array_remove(t.users, $2)
       WHERE t.domain_id = $1 AND $2 = ANY(t.users)
         AND NOT EXISTS (SELECT 1 FROM role_binding b WHERE b.domain_id = $1 AND b.user_id = $2
                         AND (b.workspace_id = t.workspace_id OR b.role_type = 'DOMAIN_ADMIN'))`,
      domainId,
      userId,
    );
  }
  return changed > 0;
}
