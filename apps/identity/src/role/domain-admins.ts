import type { Prisma } from '../generated/prisma/client';
import { xactLock } from '../locks';
import { MANAGED_DOMAIN_ADMIN } from './managed';

// A domain's managed DOMAIN_ADMIN set, which never loses its last enabled holder: a change that could
// (a binding deleted or given another role, a user disabled or deleted) takes the set's lock, then
// counts the others.

/** Serializes changes to a domain's DOMAIN_ADMIN set (so the last admin check cannot be raced). */
export function lockDomainAdmins(tx: Prisma.TransactionClient, domainId: string) {
  return xactLock(tx, `domain-admins:${domainId}`);
}

/** Enabled users other than `userId` who hold the managed DOMAIN_ADMIN role in the domain (call under lockDomainAdmins). */
export async function otherEnabledAdmins(tx: Prisma.TransactionClient, domainId: string, userId: string): Promise<number> {
  const [{ n }] = await tx.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM role_binding b JOIN "user" u ON u.domain_id = b.domain_id AND u.user_id = b.user_id
     WHERE b.domain_id = $1 AND b.role_type = 'DOMAIN_ADMIN' AND b.role_id = '${MANAGED_DOMAIN_ADMIN}' AND u.state = 'ENABLED' AND u.user_id <> $2`,
    domainId,
    userId,
  );
  return n;
}
