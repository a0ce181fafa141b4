import type { Pool } from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** A `workspace` row as stored. */
export interface WorkspaceRow {
  domain_id: string;
  workspace_id: string;
  name: string;
  state: string;
  tags: unknown;
  created_by: string;
  is_managed: boolean;
  created_at: Date;
  changed_at: Date | null;
}

/** What a new workspace is stored with. */
export interface NewWorkspace {
  domain_id: string;
  workspace_id: string;
  name: string;
  tags: Record<string, unknown>;
  created_by: string;
}

const key = (domainId: string, workspaceId: string) => ({ domain_id_workspace_id: { domain_id: domainId, workspace_id: workspaceId } });

/** Every read and write of the `workspace` table, and identity's records a deleted workspace takes with it (list and stat read through fields.ts). */
export class WorkspaceRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  /** Runs fn in one transaction; the methods that take `tx` run in it. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }

  /** The workspace in the domain; `db`: the client to read through (the read replica's for a get, a grant's transaction). */
  find(domainId: string, workspaceId: string, db: PrismaClient | Tx = this.prisma): Promise<WorkspaceRow | null> {
    return db.workspace.findUnique({ where: key(domainId, workspaceId) });
  }

  /** How many distinct users have a role binding in each of the workspaces. */
  async userCounts(domainId: string, ids: string[]): Promise<Map<string, number>> {
    if (!ids.length) return new Map();
    const { rows } = await this.pool.query<{ workspace_id: string; n: number }>(
      'SELECT workspace_id, count(DISTINCT user_id)::int AS n FROM role_binding WHERE domain_id = $1 AND workspace_id = ANY($2::text[]) GROUP BY workspace_id',
      [domainId, ids],
    );
    return new Map(rows.map((r) => [r.workspace_id, r.n]));
  }

  insert(w: NewWorkspace): Promise<WorkspaceRow> {
    return this.prisma.workspace.create({ data: { ...w, tags: w.tags as Prisma.InputJsonValue } });
  }

  update(domainId: string, workspaceId: string, changes: { name?: string; tags?: Record<string, unknown> }): Promise<WorkspaceRow> {
    return this.prisma.workspace.update({
      where: key(domainId, workspaceId),
      data: { ...(changes.name !== undefined && { name: changes.name }), ...(changes.tags !== undefined && { tags: changes.tags as Prisma.InputJsonValue }) },
    });
  }

  /** Sets the state; changed_at moves only when `changed`. */
  setState(tx: Tx, domainId: string, workspaceId: string, state: string, changed: boolean): Promise<WorkspaceRow> {
    return tx.workspace.update({ where: key(domainId, workspaceId), data: { state, ...(changed && { changed_at: new Date() }) } });
  }

  /** Deletes the workspace with its role bindings, projects and project groups. */
  async delete(tx: Tx, domainId: string, workspaceId: string): Promise<void> {
    const where = { domain_id: domainId, workspace_id: workspaceId };
    await tx.roleBinding.deleteMany({ where });
    await tx.project.deleteMany({ where });
    await tx.projectGroup.deleteMany({ where });
    await tx.workspace.delete({ where: { domain_id_workspace_id: where } });
  }
}
