import type { Prisma } from './generated/prisma/client';

/**
 * Identity's one transaction-scoped advisory lock: on `keys` (several: in one round trip, in their
 * order, a select list being evaluated in order), held until the transaction ends; `shared`: readers
 * share it, a change takes it alone.
 */
export async function xactLock(tx: Prisma.TransactionClient, keys: string | readonly string[], o: { shared?: boolean } = {}) {
  const list = typeof keys === 'string' ? [keys] : keys;
  const fn = o.shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await tx.$executeRawUnsafe(`SELECT ${list.map((_, i) => `${fn}(hashtext($${i + 1}))`).join(', ')}`, ...list);
}

/**
 * Serializes a workspace's structure: project groups created under a parent, moved or deleted, and
 * projects placed in a group, so a move never closes a cycle and nothing lands in a group being deleted.
 */
export function lockWorkspaceStructure(tx: Prisma.TransactionClient, domainId: string, workspaceId: string) {
  return xactLock(tx, `project-group:${domainId}:${workspaceId}`);
}
