import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { projectScope, type DirectoryClient } from '@platform/directory';
import { applyOnly, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { checkId, refuseCaseVariant } from '../ids';
import { checkWorkspaceUsers } from '../membership';
import { lockWorkspaceStructure } from '../locks';
import { requireDomain, requireWorkspace } from '../lookups';
import { workspaceScope } from '../scope';
import { projectResource } from './fields';
import { ProjectRepository, type ProjectRow } from './repository';
import { toProjectInfo, type ProjectType } from './responses';
import { replicaPrisma } from '../replica-prisma';

export interface ProjectListInput {
  query?: Query;
  project_id?: string;
  name?: string;
  project_type?: ProjectType;
  created_by?: string;
  include_children?: boolean;
  workspace_id?: string;
  project_group_id?: string;
  user_id?: string;
}

/** A non-empty list of user ids, each well-formed, without duplicates (at most 1000 at once). */
export function checkUsers(users: string[]): string[] {
  const list = [...new Set(users.map((u) => u.trim()).filter(Boolean))];
  if (list.length === 0) throw errors.requiredParameter('users');
  if (list.length > 1000) throw errors.invalidParameter('users', 'at most 1000 user ids at once');
  for (const u of list) checkId('users', u);
  return list;
}

/**
 * Projects (upstream ProjectService). Writes are a WORKSPACE_OWNER's, in their workspace (a DOMAIN_ADMIN
 * through a workspace-scoped grant). Reads: DOMAIN_ADMIN every project of the domain, WORKSPACE_OWNER
 * their workspace's, WORKSPACE_MEMBER the projects the directory gives them (the rule every module
 * applies). Every change republishes the project directory before it answers. Project-group structure
 * changes and project placement share the workspace's advisory lock, so a project never lands in a
 * group being deleted.
 */
export class ProjectService {
  private readonly projects: ProjectRepository;

  constructor(
    private readonly deps: Pick<IdentityDeps, 'prisma' | 'pool' | 'reads'>,
    private readonly directory: Pick<DirectoryClient, 'memberProjects' | 'projectsInGroup'>,
    private readonly effects: Effects,
  ) {
    this.projects = new ProjectRepository(deps.prisma);
  }

  private async visibility(auth: AuthContext): Promise<Condition[]> {
    const scope = workspaceScope(auth);
    return [...scope, ...(await projectScope(this.directory, auth)).conditions('project_id')];
  }

  /** The project if the caller may see it; `read`: a get's read, which the read replica may serve. */
  private async visible(auth: AuthContext, projectId: string, read = false): Promise<ProjectRow> {
    const p = read
      ? await this.deps.reads.withClient(auth, this.deps.prisma, replicaPrisma, (db) => this.projects.find(auth.domainId, projectId, db))
      : await this.projects.find(auth.domainId, projectId);
    if (!p || (auth.scope === 'WORKSPACE' && p.workspace_id !== auth.workspaceId) || !(await projectScope(this.directory, auth)).allows(p.project_id)) {
      throw errors.notFound('project_id', projectId);
    }
    return p;
  }

  private async requireGroup(tx: Prisma.TransactionClient, domainId: string, workspaceId: string, groupId: string) {
    if ((await this.projects.groupWorkspace(tx, domainId, groupId)) !== workspaceId) throw errors.notFound('project_group_id', groupId);
  }

  /** A new project (API: a generated id; admin CLI: the id it was given). */
  async createInDomain(
    domainId: string,
    input: { project_id?: string; workspace_id: string; name: string; project_type?: ProjectType; tags?: Record<string, unknown>; project_group_id?: string; created_by?: string },
  ) {
    if (input.project_id !== undefined) checkId('project_id', input.project_id);
    await requireDomain(this.deps.prisma, domainId);
    await requireWorkspace(this.deps.prisma, domainId, input.workspace_id);
    const projectId = input.project_id ?? generateId('project');
    const p = await this.projects
      .transaction(async (tx) => {
        await lockWorkspaceStructure(tx, domainId, input.workspace_id);
        if (input.project_group_id) await this.requireGroup(tx, domainId, input.workspace_id, input.project_group_id);
        await refuseCaseVariant(tx, 'project', domainId, projectId);
        return this.projects.insert(tx, {
          domain_id: domainId,
          project_id: projectId,
          workspace_id: input.workspace_id,
          name: input.name,
          project_type: input.project_type ?? 'PRIVATE',
          tags: input.tags ?? {},
          project_group_id: input.project_group_id ?? '',
          created_by: input.created_by ?? '',
        });
      })
      .catch((e: unknown) => {
        if ((e as { code?: string }).code === 'P2002') throw errors.alreadyExists('project_id', projectId); // a concurrent create won
        throw e;
      });
    await this.effects.publish(domainId);
    return toProjectInfo(p);
  }

  create(auth: AuthContext, input: { name: string; project_type?: ProjectType; tags?: Record<string, unknown>; project_group_id?: string }) {
    return this.createInDomain(auth.domainId, { ...input, workspace_id: auth.workspaceId, created_by: auth.userId });
  }

  async update(auth: AuthContext, input: { project_id: string; name?: string; tags?: Record<string, unknown> }) {
    const p = await this.visible(auth, input.project_id);
    const updated = await this.projects.update(p.domain_id, p.project_id, { name: input.name, tags: input.tags });
    if (input.name !== undefined) await this.effects.publish(p.domain_id);
    return toProjectInfo(updated);
  }

  async updateProjectType(auth: AuthContext, input: { project_id: string; project_type: ProjectType }) {
    const p = await this.visible(auth, input.project_id);
    const updated = await this.projects.update(p.domain_id, p.project_id, { project_type: input.project_type });
    await this.effects.publish(p.domain_id);
    return toProjectInfo(updated);
  }

  async changeProjectGroup(auth: AuthContext, input: { project_id: string; project_group_id: string }) {
    const p = await this.visible(auth, input.project_id);
    const updated = await this.projects.transaction(async (tx) => {
      await lockWorkspaceStructure(tx, p.domain_id, p.workspace_id);
      await this.requireGroup(tx, p.domain_id, p.workspace_id, input.project_group_id);
      return this.projects.setGroup(tx, p.domain_id, p.project_id, input.project_group_id);
    });
    await this.effects.publish(p.domain_id);
    return toProjectInfo(updated);
  }

  async delete(auth: AuthContext, projectId: string) {
    const p = await this.visible(auth, projectId);
    await this.projects.delete(p.domain_id, p.project_id);
    await this.effects.publish(p.domain_id);
  }

  /**
   * Project users (upstream add_users / remove_users): set union and difference, each in one
   * statement so concurrent changes never lose each other; added users must belong to the project's
   * workspace (a role binding there, or DOMAIN_ADMIN). The directory is republished before answering.
   */
  async addUsersTo(p: ProjectRow, users: string[]) {
    const list = checkUsers(users);
    await checkWorkspaceUsers(this.deps.prisma, p.domain_id, p.workspace_id, list);
    return this.usersChanged(p, await this.projects.addUsers(p.domain_id, p.project_id, list));
  }

  async removeUsersFrom(p: ProjectRow, users: string[]) {
    return this.usersChanged(p, await this.projects.removeUsers(p.domain_id, p.project_id, checkUsers(users)));
  }

  /** After a change of users: the project gone meanwhile is ERROR_NOT_FOUND; else the directory is republished. */
  private async usersChanged(p: ProjectRow, updated: ProjectRow | undefined) {
    if (!updated) throw errors.notFound('project_id', p.project_id);
    await this.effects.publish(p.domain_id);
    return toProjectInfo(updated);
  }

  /** The project by id for the admin CLI (no caller: any project of the domain). */
  async findForAdmin(domainId: string, projectId: string): Promise<ProjectRow> {
    await requireDomain(this.deps.prisma, domainId);
    const p = await this.projects.find(domainId, projectId);
    if (!p) throw errors.notFound('project_id', projectId);
    return p;
  }

  async addUsers(auth: AuthContext, input: { project_id: string; users: string[] }) {
    return this.addUsersTo(await this.visible(auth, input.project_id), input.users);
  }

  async removeUsers(auth: AuthContext, input: { project_id: string; users: string[] }) {
    return this.removeUsersFrom(await this.visible(auth, input.project_id), input.users);
  }

  async get(auth: AuthContext, projectId: string) {
    return toProjectInfo(await this.visible(auth, projectId, true));
  }

  async list(auth: AuthContext, input: ProjectListInput) {
    const scope = [...(await this.visibility(auth)), ...eqConditions(input, ['project_id', 'name', 'project_type', 'created_by', 'workspace_id'])];
    if (input.user_id !== undefined) scope.push({ key: 'users', value: input.user_id, operator: 'eq' });
    if (input.project_group_id !== undefined) {
      if (input.include_children) {
        // The group and every group below it, as the directory (published on each change) has them.
        scope.push({ key: 'project_id', value: await this.directory.projectsInGroup(auth.domainId, input.project_group_id), operator: 'in' });
      } else {
        scope.push({ key: 'project_group_id', value: input.project_group_id, operator: 'eq' });
      }
    }
    const { rows, total_count } = await runList(this.deps.reads.for(auth), projectResource, input.query, scope);
    const only = resolveOnly(projectResource, input.query);
    return { results: rows.map((r) => applyOnly(toProjectInfo(r as ProjectRow), only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), projectResource, query, await this.visibility(auth));
  }
}
