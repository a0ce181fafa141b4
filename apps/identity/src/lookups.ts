import { errors } from '@platform/errors';
import type { PrismaClient, Prisma } from './generated/prisma/client';
import { DomainRepository } from './domain/repository';

// The records a change rests on, found or ERROR_NOT_FOUND.

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

export async function requireDomain(db: Db, domainId: string) {
  const d = await new DomainRepository(db).find(domainId);
  if (!d) throw errors.notFound('domain_id', domainId);
  return d;
}

export async function requireWorkspace(db: Db, domainId: string, workspaceId: string) {
  const w = await db.workspace.findUnique({ where: { domain_id_workspace_id: { domain_id: domainId, workspace_id: workspaceId } } });
  if (!w) throw errors.notFound('workspace_id', workspaceId);
  return w;
}
