import type { ReadRunner } from '@platform/db';
import type { AuthContext } from '@platform/auth';
import { generateId, isoOrEmpty } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { DirectorySync } from '../directory/sync';
import { projectGroupResource, type ProjectGroupRow } from './repository';
import { checkWorkspaceUsers, lockWorkspaceStructure, workspaceScope } from '../common';

export function toProjectGroupInfo(r: ProjectGroupRow) {
  return {
    project_group_id: r.project_group_id,
    name: r.name,
    tags: (r.tags ?? {}) as Record<string, unknown>,
    users: r.users ?? [],
    reference_id: r.reference_id,
    is_managed: r.is_managed,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    parent_group_id: r.parent_group_id,
    trusted_account_id: r.trusted_account_id,
    created_at: isoOrEmpty(r.created_at),
    last_synced_at: isoOrEmpty(r.last_synced_at),
  };
}

const SELECT_ONE = 'SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2';

export interface ListInput {
  query?: Query;
  project_group_id?: string;
  name?: string;
  workspace_id?: string;
  parent_group_id?: string;
}

/** What a caller may see: their domain, their workspace (workspace scope), and as a member only their groups. */
function visibility(auth: AuthContext): Condition[] {
  const c = workspaceScope(auth);
  if (auth.roleType === 'WORKSPACE_MEMBER') c.push({ key: 'users', value: auth.userId, operator: 'eq' });
  return c;
}

export class ProjectGroupService {
  constructor(
    private readonly deps: IdentityDeps,
    private readonly directory: DirectorySync,
  ) {}

  /**
   * The group if the caller may see it, else ERROR_NOT_FOUND (never "exists but not yours"). Inside a
   * structural change it is read in that transaction; otherwise straight from the pool (the hot path
   * of get and every write: one indexed statement, no ORM round trip).
   */
  private async visible(auth: AuthContext, id: string, tx?: Prisma.TransactionClient, db: ReadRunner = this.deps.pool): Promise<ProjectGroupRow> {
    const g = tx
      ? await tx.projectGroup.findUnique({ where: { domain_id_project_group_id: { domain_id: auth.domainId, project_group_id: id } } })
      : (await db.query<ProjectGroupRow>(SELECT_ONE, [auth.domainId, id])).rows[0];
    if (
      !g ||
      (auth.scope === 'WORKSPACE' && g.workspace_id !== auth.workspaceId) ||
      (auth.roleType === 'WORKSPACE_MEMBER' && !g.users.includes(auth.userId))
    ) {
      throw errors.notFound('project_group_id', id);
    }
    return g;
  }

  private writable(g: ProjectGroupRow) {
    if (g.is_managed) throw errors.permissionDenied(`Project group ${g.project_group_id} is managed and cannot be changed.`);
    return g;
  }

  /**
   * Structural changes (create under a parent, move, delete) in one workspace are serialized, so two
   * concurrent moves can never close a cycle and a child cannot be created under a group being deleted.
   */
  private async locked<T>(auth: AuthContext, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    const result = await this.deps.prisma.$transaction(async (tx) => {
      await lockWorkspaceStructure(tx, auth.domainId, auth.workspaceId);
      return fn(tx);
    });
    await this.directory.publish(auth.domainId);
    return result;
  }

  async create(auth: AuthContext, input: { name: string; tags?: Record<string, unknown>; parent_group_id?: string }) {
    return this.locked(auth, async (tx) => {
      if (input.parent_group_id) await this.visible(auth, input.parent_group_id, tx).catch(() => {
        throw errors.notFound('parent_group_id', input.parent_group_id!);
      });
      const g = await tx.projectGroup.create({
        data: {
          domain_id: auth.domainId,
          workspace_id: auth.workspaceId,
          project_group_id: generateId('pg'),
          name: input.name,
          tags: (input.tags ?? {}) as Prisma.InputJsonValue,
          parent_group_id: input.parent_group_id ?? '',
        },
      });
      return toProjectGroupInfo(g);
    });
  }

  async update(auth: AuthContext, input: { project_group_id: string; name?: string; tags?: Record<string, unknown> }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const updated = await this.deps.prisma.projectGroup.update({
      where: { domain_id_project_group_id: { domain_id: g.domain_id, project_group_id: g.project_group_id } },
      data: { ...(input.name !== undefined && { name: input.name }), ...(input.tags !== undefined && { tags: input.tags as Prisma.InputJsonValue }) },
    });
    return toProjectGroupInfo(updated);
  }

  async changeParentGroup(auth: AuthContext, input: { project_group_id: string; parent_group_id: string }) {
    return this.locked(auth, async (tx) => {
      const g = this.writable(await this.visible(auth, input.project_group_id, tx));
      if (input.parent_group_id === g.project_group_id) {
        throw errors.notAllowed('ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP', 'A project group cannot be its own parent.');
      }
      const parent = await this.visible(auth, input.parent_group_id, tx).catch(() => {
        throw errors.notFound('parent_group_id', input.parent_group_id);
      });
      if (parent.workspace_id !== g.workspace_id) throw errors.invalidParameter('parent_group_id', 'the parent must be in the same workspace');
      // Every descendant, at any depth: the new parent must not be one of them.
      const below = await tx.$queryRawUnsafe<{ project_group_id: string }[]>(
        `WITH RECURSIVE sub AS (
           SELECT project_group_id FROM project_group WHERE domain_id = $1 AND parent_group_id = $2
           UNION
           SELECT c.project_group_id FROM project_group c JOIN sub ON c.parent_group_id = sub.project_group_id WHERE c.domain_id = $1
         ) SELECT project_group_id FROM sub WHERE project_group_id = $3`,
        g.domain_id,
        g.project_group_id,
        parent.project_group_id,
      );
      if (below.length) {
        throw errors.notAllowed(
          'ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP',
          `Project group ${parent.project_group_id} is a descendant of ${g.project_group_id}; moving under it would make a cycle.`,
        );
      }
      const updated = await tx.projectGroup.update({
        where: { domain_id_project_group_id: { domain_id: g.domain_id, project_group_id: g.project_group_id } },
        data: { parent_group_id: parent.project_group_id },
      });
      return toProjectGroupInfo(updated);
    });
  }

  async delete(auth: AuthContext, id: string) {
    await this.locked(auth, async (tx) => {
      const g = this.writable(await this.visible(auth, id, tx));
      const child = await tx.projectGroup.findFirst({ where: { domain_id: g.domain_id, parent_group_id: g.project_group_id }, select: { project_group_id: true } });
      if (child) throw errors.notAllowed('ERROR_RELATED_PROJECT_GROUP_EXIST', `Project group ${id} has child project groups (${child.project_group_id}).`);
      const project = await tx.project.findFirst({ where: { domain_id: g.domain_id, project_group_id: g.project_group_id }, select: { project_id: true } });
      if (project) throw errors.notAllowed('ERROR_RELATED_PROJECT_EXIST', `Project group ${id} has projects (${project.project_id}).`);
      await tx.projectGroup.delete({ where: { domain_id_project_group_id: { domain_id: g.domain_id, project_group_id: g.project_group_id } } });
    });
  }

  async addUsers(auth: AuthContext, input: { project_group_id: string; users: string[] }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const users = [...new Set(input.users)];
    await checkWorkspaceUsers(this.deps.prisma, g.domain_id, g.workspace_id, users);
    // Set union in one statement, so concurrent additions never lose each other.
    const [updated] = await this.deps.prisma.$queryRawUnsafe<ProjectGroupRow[]>(
      `UPDATE project_group SET users = ARRAY(SELECT DISTINCT unnest(users || $3::text[]) ORDER BY 1)
       WHERE domain_id = $1 AND project_group_id = $2 RETURNING *`,
      g.domain_id,
      g.project_group_id,
      users,
    );
    if (!updated) throw errors.notFound('project_group_id', input.project_group_id);
    // Group users see the group's projects in every module: publish before answering.
    await this.directory.publish(auth.domainId);
    return toProjectGroupInfo(updated);
  }

  async removeUsers(auth: AuthContext, input: { project_group_id: string; users: string[] }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const [updated] = await this.deps.prisma.$queryRawUnsafe<ProjectGroupRow[]>(
      `UPDATE project_group SET users = ARRAY(SELECT u FROM unnest(users) AS u WHERE u <> ALL($3::text[]) ORDER BY 1)
       WHERE domain_id = $1 AND project_group_id = $2 RETURNING *`,
      g.domain_id,
      g.project_group_id,
      [...new Set(input.users)],
    );
    if (!updated) throw errors.notFound('project_group_id', input.project_group_id);
    await this.directory.publish(auth.domainId);
    return toProjectGroupInfo(updated);
  }

  async get(auth: AuthContext, id: string) {
    return toProjectGroupInfo(await this.visible(auth, id, undefined, this.deps.reads.for(auth)));
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope = visibility(auth);
    scope.push(...eqConditions(input, ['project_group_id', 'name', 'workspace_id', 'parent_group_id']));
    const { rows, total_count } = await runList(this.deps.reads.for(auth), projectGroupResource, input.query, scope);
    const only = resolveOnly(projectGroupResource, input.query);
    return { results: rows.map((r) => applyOnly(toProjectGroupInfo(r as ProjectGroupRow), only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), projectGroupResource, query, visibility(auth));
  }
}
