import type { ReadRunner } from '@platform/db';
import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { projectGroupResource } from './fields';
import { ProjectGroupRepository, type ProjectGroupRow } from './repository';
import { toProjectGroupInfo } from './responses';
import { checkWorkspaceUsers } from '../membership';
import { lockWorkspaceStructure } from '../locks';
import { workspaceScope } from '../scope';

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
  private readonly groups: ProjectGroupRepository;

  constructor(
    private readonly deps: IdentityDeps,
    private readonly effects: Effects,
  ) {
    this.groups = new ProjectGroupRepository(deps.prisma, deps.pool);
  }

  /**
   * The group if the caller may see it, else ERROR_NOT_FOUND (never "exists but not yours"). Inside a
   * structural change it is read in that transaction; otherwise straight from the pool (the hot path
   * of get and every write: one indexed statement, no ORM round trip).
   */
  private async visible(auth: AuthContext, id: string, tx?: Prisma.TransactionClient, db: ReadRunner = this.deps.pool): Promise<ProjectGroupRow> {
    const g = await this.groups.find(auth.domainId, id, tx, db);
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
    const result = await this.groups.transaction(async (tx) => {
      await lockWorkspaceStructure(tx, auth.domainId, auth.workspaceId);
      return fn(tx);
    });
    await this.effects.publish(auth.domainId);
    return result;
  }

  async create(auth: AuthContext, input: { name: string; tags?: Record<string, unknown>; parent_group_id?: string }) {
    return this.locked(auth, async (tx) => {
      if (input.parent_group_id) await this.visible(auth, input.parent_group_id, tx).catch(() => {
        throw errors.notFound('parent_group_id', input.parent_group_id!);
      });
      const g = await this.groups.insert(tx, {
        domain_id: auth.domainId,
        workspace_id: auth.workspaceId,
        project_group_id: generateId('pg'),
        name: input.name,
        tags: input.tags ?? {},
        parent_group_id: input.parent_group_id ?? '',
      });
      return toProjectGroupInfo(g);
    });
  }

  async update(auth: AuthContext, input: { project_group_id: string; name?: string; tags?: Record<string, unknown> }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const updated = await this.groups.update(g.domain_id, g.project_group_id, { name: input.name, tags: input.tags });
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
      if (await this.groups.isBelow(tx, g.domain_id, g.project_group_id, parent.project_group_id)) {
        throw errors.notAllowed(
          'ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP',
          `Project group ${parent.project_group_id} is a descendant of ${g.project_group_id}; moving under it would make a cycle.`,
        );
      }
      const updated = await this.groups.setParent(tx, g.domain_id, g.project_group_id, parent.project_group_id);
      return toProjectGroupInfo(updated);
    });
  }

  async delete(auth: AuthContext, id: string) {
    await this.locked(auth, async (tx) => {
      const g = this.writable(await this.visible(auth, id, tx));
      const child = await this.groups.aChild(tx, g.domain_id, g.project_group_id);
      if (child) throw errors.notAllowed('ERROR_RELATED_PROJECT_GROUP_EXIST', `Project group ${id} has child project groups (${child}).`);
      const project = await this.groups.aProject(tx, g.domain_id, g.project_group_id);
      if (project) throw errors.notAllowed('ERROR_RELATED_PROJECT_EXIST', `Project group ${id} has projects (${project}).`);
      await this.groups.delete(tx, g.domain_id, g.project_group_id);
    });
  }

  async addUsers(auth: AuthContext, input: { project_group_id: string; users: string[] }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const users = [...new Set(input.users)];
    await checkWorkspaceUsers(this.deps.prisma, g.domain_id, g.workspace_id, users);
    const updated = await this.groups.addUsers(g.domain_id, g.project_group_id, users);
    if (!updated) throw errors.notFound('project_group_id', input.project_group_id);
    // Group users see the group's projects in every module: publish before answering.
    await this.effects.publish(auth.domainId);
    return toProjectGroupInfo(updated);
  }

  async removeUsers(auth: AuthContext, input: { project_group_id: string; users: string[] }) {
    const g = this.writable(await this.visible(auth, input.project_group_id));
    const updated = await this.groups.removeUsers(g.domain_id, g.project_group_id, [...new Set(input.users)]);
    if (!updated) throw errors.notFound('project_group_id', input.project_group_id);
    await this.effects.publish(auth.domainId);
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
