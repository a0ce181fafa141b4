import type { ReadRunner } from '@platform/db';
import type { Pool } from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** A `project_group` row as stored. */
export interface ProjectGroupRow {
  domain_id: string;
  project_group_id: string;
  workspace_id: string;
  name: string;
  tags: unknown;
  users: string[];
  reference_id: string;
  is_managed: boolean;
  parent_group_id: string;
  trusted_account_id: string;
  created_at: Date;
  last_synced_at: Date | null;
}

/** What a new project group is stored with. */
export interface NewProjectGroup {
  domain_id: string;
  workspace_id: string;
  project_group_id: string;
  name: string;
  tags: Record<string, unknown>;
  parent_group_id: string;
}

const key = (domainId: string, groupId: string) => ({ domain_id_project_group_id: { domain_id: domainId, project_group_id: groupId } });

/** Every read and write of the `project_group` table (list and stat read through fields.ts). */
export class ProjectGroupRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  /** Runs fn in one transaction; the methods that take `tx` run in it. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }

  /** The group in the domain: in the transaction when given, else one indexed statement on `db` (the pool, or a get's read runner). */
  async find(domainId: string, groupId: string, tx?: Tx, db: ReadRunner = this.pool): Promise<ProjectGroupRow | undefined> {
    if (tx) return (await tx.projectGroup.findUnique({ where: key(domainId, groupId) })) ?? undefined;
    return (await db.query<ProjectGroupRow>('SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2', [domainId, groupId])).rows[0];
  }

  insert(tx: Tx, g: NewProjectGroup): Promise<ProjectGroupRow> {
    return tx.projectGroup.create({ data: { ...g, tags: g.tags as Prisma.InputJsonValue } });
  }

  update(domainId: string, groupId: string, changes: { name?: string; tags?: Record<string, unknown> }): Promise<ProjectGroupRow> {
    return this.prisma.projectGroup.update({
      where: key(domainId, groupId),
      data: { ...(changes.name !== undefined && { name: changes.name }), ...(changes.tags !== undefined && { tags: changes.tags as Prisma.InputJsonValue }) },
    });
  }

  /** Whether `candidateId` is a descendant of the group, at any depth. */
  async isBelow(tx: Tx, domainId: string, groupId: string, candidateId: string): Promise<boolean> {
    const below = await tx.$queryRawUnsafe<{ project_group_id: string }[]>(
      `WITH RECURSIVE sub AS (
         SELECT project_group_id FROM project_group WHERE domain_id = $1 AND parent_group_id = $2
         UNION
         SELECT c.project_group_id FROM project_group c JOIN sub ON c.parent_group_id = sub.project_group_id WHERE c.domain_id = $1
       ) SELECT project_group_id FROM sub WHERE project_group_id = $3`,
      domainId,
      groupId,
      candidateId,
    );
    return below.length > 0;
  }

  setParent(tx: Tx, domainId: string, groupId: string, parentId: string): Promise<ProjectGroupRow> {
    return tx.projectGroup.update({ where: key(domainId, groupId), data: { parent_group_id: parentId } });
  }

  /** One child group's id, if the group has any. */
  async aChild(tx: Tx, domainId: string, groupId: string): Promise<string | undefined> {
    const child = await tx.projectGroup.findFirst({ where: { domain_id: domainId, parent_group_id: groupId }, select: { project_group_id: true } });
    return child?.project_group_id;
  }

  /** One project's id placed in the group, if it has any. */
  async aProject(tx: Tx, domainId: string, groupId: string): Promise<string | undefined> {
    const project = await tx.project.findFirst({ where: { domain_id: domainId, project_group_id: groupId }, select: { project_id: true } });
    return project?.project_id;
  }

  async delete(tx: Tx, domainId: string, groupId: string): Promise<void> {
    await tx.projectGroup.delete({ where: key(domainId, groupId) });
  }

  /** Adds the users (a set union in one statement, so concurrent additions never lose each other); undefined when the group is gone. */
  async addUsers(domainId: string, groupId: string, users: string[]): Promise<ProjectGroupRow | undefined> {
    const [updated] = await this.prisma.$queryRawUnsafe<ProjectGroupRow[]>(
      `UPDATE project_group SET users = ARRAY(SELECT DISTINCT unnest(users || $3::text[]) ORDER BY 1)
       WHERE domain_id = $1 AND project_group_id = $2 RETURNING *`,
      domainId,
      groupId,
      users,
    );
    return updated;
  }

  /** Removes the users (a set difference in one statement); undefined when the group is gone. */
  async removeUsers(domainId: string, groupId: string, users: string[]): Promise<ProjectGroupRow | undefined> {
    const [updated] = await this.prisma.$queryRawUnsafe<ProjectGroupRow[]>(
      `UPDATE project_group SET users = ARRAY(SELECT u FROM unnest(users) AS u WHERE u <> ALL($3::text[]) ORDER BY 1)
       WHERE domain_id = $1 AND project_group_id = $2 RETURNING *`,
      domainId,
      groupId,
      users,
    );
    return updated;
  }
}
