import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Effects } from '../directory/effects';
import { checkId, refuseCaseVariant } from '../ids';
import { requireDomain } from '../lookups';
import { workspaceResource } from './fields';
import { WorkspaceRepository, type WorkspaceRow } from './repository';
import { toWorkspaceInfo } from './responses';
import type { ReadCaller } from '@platform/db';
import { replicaPrisma } from '../replica-prisma';
import { revokeInTransaction } from '../revocation/grant-locks';

export interface WorkspaceListInput {
  query?: Query;
  workspace_id?: string;
  name?: string;
  state?: 'ENABLED' | 'DISABLED';
  created_by?: string;
  is_managed?: boolean;
  is_dormant?: boolean;
  workspace_group_id?: string;
}

/**
 * Workspaces (upstream WorkspaceService): DOMAIN_ADMIN only, in the caller's domain. Disabling or
 * deleting one revokes every access token scoped to it, in every module, before answering; deleting
 * also removes what identity keeps in it (role bindings, projects, project groups) and republishes the
 * project directory.
 */
export class WorkspaceService {
  private readonly workspaces: WorkspaceRepository;

  constructor(
    private readonly deps: Pick<IdentityDeps, 'prisma' | 'pool' | 'reads'>,
    private readonly effects: Effects,
  ) {
    this.workspaces = new WorkspaceRepository(deps.prisma, deps.pool);
  }

  private async info(w: WorkspaceRow) {
    return toWorkspaceInfo(w, (await this.workspaces.userCounts(w.domain_id, [w.workspace_id])).get(w.workspace_id) ?? 0);
  }

  /** The workspace; `caller`: a get's read, which the read replica may serve. */
  private async find(domainId: string, workspaceId: string, caller?: ReadCaller): Promise<WorkspaceRow> {
    const w = caller
      ? await this.deps.reads.withClient(caller, this.deps.prisma, replicaPrisma, (db) => this.workspaces.find(domainId, workspaceId, db))
      : await this.workspaces.find(domainId, workspaceId);
    if (!w) throw errors.notFound('workspace_id', workspaceId);
    return w;
  }

  /** A new workspace (API: a generated id; the admin CLI and bootstrap: the id they were given). */
  async createInDomain(domainId: string, input: { workspace_id?: string; name: string; tags?: Record<string, unknown>; created_by?: string }) {
    if (input.workspace_id !== undefined) checkId('workspace_id', input.workspace_id);
    await requireDomain(this.deps.prisma, domainId);
    const workspaceId = input.workspace_id ?? generateId('workspace');
    await refuseCaseVariant(this.deps.prisma, 'workspace', domainId, workspaceId);
    let w: WorkspaceRow;
    try {
      w = await this.workspaces.insert({ domain_id: domainId, workspace_id: workspaceId, name: input.name, tags: input.tags ?? {}, created_by: input.created_by ?? '' });
    } catch (e) {
      if ((e as { code?: string }).code === 'P2002') throw errors.alreadyExists('workspace_id', workspaceId); // a concurrent create won
      throw e;
    }
    await this.effects.publish(domainId);
    return toWorkspaceInfo(w, 0);
  }

  create(auth: AuthContext, input: { name: string; tags?: Record<string, unknown> }) {
    return this.createInDomain(auth.domainId, { ...input, created_by: auth.userId });
  }

  async update(auth: AuthContext, input: { workspace_id: string; name?: string; tags?: Record<string, unknown> }) {
    const w = await this.find(auth.domainId, input.workspace_id);
    const updated = await this.workspaces.update(w.domain_id, w.workspace_id, { name: input.name, tags: input.tags });
    // Other modules show workspace names from the directory.
    if (input.name !== undefined) await this.effects.publish(auth.domainId);
    return this.info(updated);
  }

  private async setState(auth: AuthContext, workspaceId: string, state: 'ENABLED' | 'DISABLED') {
    const w = await this.find(auth.domainId, workspaceId);
    const updated = await this.workspaces.transaction(async (tx) => {
      // Revoked in the change's transaction, under the lock grants for the workspace share: if the
      // revocation fails nothing changed; if the update then fails, the workspace's tokens were only
      // cut short (they can be granted again); no grant straddles it (revocation/grant-locks.ts).
      if (state === 'DISABLED') await revokeInTransaction(tx, this.effects, { kind: 'workspace', domainId: w.domain_id, workspaceId: w.workspace_id });
      return this.workspaces.setState(tx, w.domain_id, w.workspace_id, state, state !== w.state);
    });
    return this.info(updated);
  }

  enable(auth: AuthContext, workspaceId: string) {
    return this.setState(auth, workspaceId, 'ENABLED');
  }

  disable(auth: AuthContext, workspaceId: string) {
    return this.setState(auth, workspaceId, 'DISABLED');
  }

  /**
   * Deletes the workspace and identity's records in it (upstream deletes the related resources;
   * `force` there skips a check on service accounts, which this platform does not keep, so both
   * forms do the same). Records of other modules in the workspace stay; no token can be granted for
   * it any more.
   */
  async delete(auth: AuthContext, workspaceId: string) {
    const w = await this.find(auth.domainId, workspaceId);
    if (w.is_managed) throw errors.permissionDenied(`Workspace ${workspaceId} is managed and cannot be deleted.`);
    await this.workspaces.transaction(async (tx) => {
      await revokeInTransaction(tx, this.effects, { kind: 'workspace', domainId: w.domain_id, workspaceId: w.workspace_id });
      await this.workspaces.delete(tx, w.domain_id, w.workspace_id);
    });
    await this.effects.publish(w.domain_id);
  }

  async get(auth: AuthContext, workspaceId: string) {
    return this.info(await this.find(auth.domainId, workspaceId, auth));
  }

  async list(auth: AuthContext, input: WorkspaceListInput) {
    // Dormancy and workspace groups are not modelled: no workspace is dormant or in a group.
    if (input.is_dormant === true || input.workspace_group_id !== undefined) return { results: [], total_count: 0 };
    const scope = [
      { key: 'domain_id', value: auth.domainId, operator: 'eq' as const },
      ...eqConditions(input, ['workspace_id', 'name', 'state', 'created_by', 'is_managed']),
    ];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), workspaceResource, input.query, scope);
    const counts = await this.workspaces.userCounts(auth.domainId, rows.map((r) => (r as WorkspaceRow).workspace_id));
    const only = resolveOnly(workspaceResource, input.query);
    return { results: rows.map((r) => applyOnly(toWorkspaceInfo(r as WorkspaceRow, counts.get((r as WorkspaceRow).workspace_id) ?? 0), only)), total_count };
  }

  stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), workspaceResource, query, [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }]);
  }
}
