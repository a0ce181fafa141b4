import type { Prisma, PrismaClient } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** A `project` row as stored. */
export interface ProjectRow {
  domain_id: string;
  project_id: string;
  workspace_id: string;
  name: string;
  project_group_id: string;
  project_type: string;
  tags: unknown;
  users: string[];
  created_by: string;
  created_at: Date;
}

/** What a new project is stored with. */
export interface NewProject {
  domain_id: string;
  project_id: string;
  workspace_id: string;
  name: string;
  project_type: string;
  tags: Record<string, unknown>;
  project_group_id: string;
  created_by: string;
}

const key = (domainId: string, projectId: string) => ({ domain_id_project_id: { domain_id: domainId, project_id: projectId } });

/** Every read and write of the `project` table (list and stat read through fields.ts). */
export class ProjectRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs fn in one transaction; the methods that take `tx` run in it. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }

  /** The project in the domain; `db`: the client to read through (the read replica's for a get). */
  find(domainId: string, projectId: string, db: PrismaClient = this.prisma): Promise<ProjectRow | null> {
    return db.project.findUnique({ where: key(domainId, projectId) });
  }

  /** The workspace of a project group of the domain; undefined when there is no such group. */
  async groupWorkspace(tx: Tx, domainId: string, groupId: string): Promise<string | undefined> {
    const g = await tx.projectGroup.findUnique({ where: { domain_id_project_group_id: { domain_id: domainId, project_group_id: groupId } } });
    return g?.workspace_id;
  }

  insert(tx: Tx, p: NewProject): Promise<ProjectRow> {
    return tx.project.create({ data: { ...p, tags: p.tags as Prisma.InputJsonValue } });
  }

  update(domainId: string, projectId: string, changes: { name?: string; tags?: Record<string, unknown>; project_type?: string }): Promise<ProjectRow> {
    return this.prisma.project.update({
      where: key(domainId, projectId),
      data: {
        ...(changes.name !== undefined && { name: changes.name }),
        ...(changes.tags !== undefined && { tags: changes.tags as Prisma.InputJsonValue }),
        ...(changes.project_type !== undefined && { project_type: changes.project_type }),
      },
    });
  }

  setGroup(tx: Tx, domainId: string, projectId: string, groupId: string): Promise<ProjectRow> {
    return tx.project.update({ where: key(domainId, projectId), data: { project_group_id: groupId } });
  }

  async delete(domainId: string, projectId: string): Promise<void> {
    await this.prisma.project.delete({ where: key(domainId, projectId) });
  }

  /** Adds the users (a set union, one statement); undefined when the project is gone. */
  addUsers(domainId: string, projectId: string, users: string[]) {
    return this.changeUsers(domainId, projectId, 'ARRAY(SELECT DISTINCT unnest(users || $3::text[]) ORDER BY 1)', users);
  }

  /** Removes the users (a set difference, one statement); undefined when the project is gone. */
  removeUsers(domainId: string, projectId: string, users: string[]) {
    return this.changeUsers(domainId, projectId, 'ARRAY(SELECT u FROM unnest(users) AS u WHERE u <> ALL($3::text[]) ORDER BY 1)', users);
  }

  private async changeUsers(domainId: string, projectId: string, expression: string, users: string[]): Promise<ProjectRow | undefined> {
    const [updated] = await this.prisma.$queryRawUnsafe<ProjectRow[]>(
      `UPDATE project SET users = ${expression} WHERE domain_id = $1 AND project_id = $2 RETURNING *`,
      domainId,
      projectId,
      users,
    );
    return updated;
  }
}
