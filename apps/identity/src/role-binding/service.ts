import type { AuthContext, RoleType } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { pruneMemberships } from '../membership';
import { requireWorkspace } from '../lookups';
import { workspaceScope } from '../scope';
import { lockDomainAdmins, otherEnabledAdmins } from '../role/domain-admins';
import { MANAGED_DOMAIN_ADMIN } from '../role/managed';
import { findRole } from '../role/service';
import { roleBindingResource } from './fields';
import { RoleBindingRepository, type RoleBindingRow } from './repository';
import { toRoleBindingInfo, type ResourceGroup } from './responses';
import { replicaPrisma } from '../replica-prisma';
import { lockForChange, revokeInTransaction, type Revocation } from '../revocation/grant-locks';

export interface RoleBindingListInput {
  query?: Query;
  role_binding_id?: string;
  role_type?: RoleType;
  workspace_id?: string;
  role_id?: string;
  user_id?: string;
}

const notAllowedRoleType = (message: string) => errors.notAllowed('ERROR_NOT_ALLOWED_ROLE_TYPE', message);
/**
 * What a binding's change ends: the tokens that binding gave, the user's tokens in its workspace (an
 * owner's binding games end nothing elsewhere); a DOMAIN_ADMIN binding gave every token of the user.
 */
const bindingRevocation = (b: RoleBindingRow): Revocation =>
  b.workspace_id ? { kind: 'binding', domainId: b.domain_id, userId: b.user_id, workspaceId: b.workspace_id } : { kind: 'user', domainId: b.domain_id, userId: b.user_id };

const lastAdmin = () => errors.notAllowed('ERROR_LAST_DOMAIN_ADMIN_CANNOT_DELETE', 'The last managed DOMAIN_ADMIN role binding of a domain (of an enabled user) cannot be deleted or changed to another role.');

const bySelf = () => errors.notAllowed('ERROR_NOT_ALLOWED_TO_UPDATE_OR_DELETE_ROLE_BY_SELF', 'You cannot change or delete your own role binding.');

/** A role fits a resource group: DOMAIN_ADMIN binds the domain, the workspace roles a workspace. */
function checkRoleFits(roleType: RoleType, group: ResourceGroup) {
  if ((roleType === 'DOMAIN_ADMIN') !== (group === 'DOMAIN')) {
    throw notAllowedRoleType(`A ${roleType} role cannot be bound to resource group ${group}.`);
  }
}

/**
 * Role bindings (upstream RoleBindingService). A DOMAIN_ADMIN (domain-scoped token) binds anyone in the
 * domain; a WORKSPACE_OWNER binds users in their own workspace only, to a workspace role, never to
 * DOMAIN_ADMIN. Nobody changes or deletes their own binding, and the last DOMAIN_ADMIN binding of a
 * domain stays. Changing or deleting a binding revokes the user's access tokens of that workspace in
 * every module, in one step with the change (they grant again and get their new role); deleting one also takes the user out of the projects and groups
 * of a workspace they no longer belong to, and republishes the directory. Reads: DOMAIN_ADMIN sees the
 * domain's bindings, a workspace token those of its workspace.
 */
export class RoleBindingService {
  private readonly bindings: RoleBindingRepository;

  constructor(
    private readonly deps: Pick<IdentityDeps, 'prisma' | 'pool' | 'reads'>,
    private readonly effects: Effects,
  ) {
    this.bindings = new RoleBindingRepository(deps.prisma);
  }

  /** The role binding if the caller may see it; `read`: a get's read, which the read replica may serve. */
  private async visible(auth: AuthContext, id: string, read = false): Promise<RoleBindingRow> {
    const b = read
      ? await this.deps.reads.withClient(auth, this.deps.prisma, replicaPrisma, (db) => this.bindings.find(id, db))
      : await this.bindings.find(id);
    if (!b || b.domain_id !== auth.domainId || (auth.scope === 'WORKSPACE' && b.workspace_id !== auth.workspaceId) || (auth.scope !== 'WORKSPACE' && auth.scope !== 'DOMAIN')) {
      throw errors.notFound('role_binding_id', id);
    }
    return b;
  }

  /** A new binding (API, admin CLI, bootstrap): the rules that hold whoever asks. */
  async createInDomain(
    domainId: string,
    input: { user_id: string; role_id: string; resource_group: ResourceGroup; workspace_id?: string },
    tx?: Prisma.TransactionClient,
  ): Promise<RoleBindingRow> {
    // The role is read under its reading lock (a custom role cannot be deleted while this binding is
    // made), so the binding needs a transaction of its own unless the caller gave one.
    if (!tx) return this.bindings.transaction((t) => this.createInDomain(domainId, input, t));
    const db = tx;
    const role = await findRole(db, domainId, input.role_id, { lock: true });
    checkRoleFits(role.role_type as RoleType, input.resource_group);
    let workspaceId = '';
    if (input.resource_group === 'WORKSPACE') {
      if (!input.workspace_id) throw errors.requiredParameter('workspace_id');
      workspaceId = (await requireWorkspace(db, domainId, input.workspace_id)).workspace_id;
    }
    if (!(await this.bindings.userExists(db, domainId, input.user_id))) {
      throw errors.notFound('user_id', input.user_id);
    }
    const existing = await this.bindings.exists(db, domainId, input.user_id, workspaceId);
    const duplicated = () =>
      workspaceId
        ? errors.duplicated('ERROR_DUPLICATED_WORKSPACE_ROLE_BINDING', `User ${input.user_id} already has a role in workspace ${workspaceId}.`)
        : errors.duplicated('ERROR_DUPLICATED_ROLE_BINDING', `User ${input.user_id} is already DOMAIN_ADMIN.`);
    if (existing) throw duplicated();
    try {
      return await this.bindings.insert(db, {
        role_binding_id: generateId('rb'),
        domain_id: domainId,
        user_id: input.user_id,
        role_type: role.role_type,
        role_id: role.role_id,
        resource_group: input.resource_group,
        workspace_id: workspaceId,
      });
    } catch (e) {
      if ((e as { code?: string }).code === 'P2002') throw duplicated(); // a concurrent create won
      throw e;
    }
  }

  async create(auth: AuthContext, input: { user_id: string; role_id: string; resource_group: ResourceGroup; workspace_id?: string }) {
    if (auth.roleType !== 'DOMAIN_ADMIN') {
      // A workspace owner: their workspace, workspace roles.
      if (input.resource_group !== 'WORKSPACE') throw errors.permissionDenied('Only a DOMAIN_ADMIN binds the DOMAIN resource group.');
      if (input.workspace_id && input.workspace_id !== auth.workspaceId) throw errors.permissionDenied(`You may bind users in workspace ${auth.workspaceId} only.`);
      input = { ...input, workspace_id: auth.workspaceId };
    }
    return toRoleBindingInfo(await this.createInDomain(auth.domainId, input));
  }

  async updateRole(auth: AuthContext, input: { role_binding_id: string; role_id: string }) {
    const b = await this.visible(auth, input.role_binding_id);
    if (b.user_id === auth.userId) throw bySelf();
    const updated = await this.bindings.transaction(async (tx) => {
      // The checks first, under the user's lock, then the admin set's, then the role's (the order every
      // transaction keeps), so a refused change ends nothing; then the revocation, one step with the
      // change: no token/grant reading the old role can straddle it (revocation/grant-locks.ts).
      await lockForChange(tx, bindingRevocation(b));
      // The last managed DOMAIN_ADMIN stays one (a custom DOMAIN_ADMIN role may grant less, or be disabled).
      if (b.role_id === MANAGED_DOMAIN_ADMIN && input.role_id !== MANAGED_DOMAIN_ADMIN) {
        await lockDomainAdmins(tx, b.domain_id);
        if ((await otherEnabledAdmins(tx, b.domain_id, b.user_id)) === 0) throw lastAdmin();
      }
      // The new role (managed, or a custom role of the binding's domain) under its reading lock: it
      // cannot be deleted under the binding.
      const role = await findRole(tx, b.domain_id, input.role_id, { lock: true });
      checkRoleFits(role.role_type as RoleType, b.resource_group as ResourceGroup);
      await this.revokeWhatItGave(tx, b);
      return this.bindings.setRole(tx, b.role_binding_id, role.role_id, role.role_type);
    });
    return toRoleBindingInfo(updated);
  }

  async delete(auth: AuthContext, id: string) {
    const b = await this.visible(auth, id);
    if (b.user_id === auth.userId) throw bySelf();
    let changed = false;
    await this.bindings.transaction(async (tx) => {
      // The user's lock first, then the admin set's (as user/disable and user/delete).
      await lockForChange(tx, bindingRevocation(b));
      if (b.role_id === MANAGED_DOMAIN_ADMIN) {
        await lockDomainAdmins(tx, b.domain_id);
        if ((await otherEnabledAdmins(tx, b.domain_id, b.user_id)) === 0) throw lastAdmin();
      }
      await this.revokeWhatItGave(tx, b);
      await this.bindings.delete(tx, b.role_binding_id);
      changed = await pruneMemberships(tx, b.domain_id, b.user_id);
    });
    if (changed) await this.effects.publish(b.domain_id);
  }

  /**
   * Under the user's lock: ends the tokens binding `b` gave, in one step with its change. A
   * DOMAIN_ADMIN's workspace tokens come from that role, not from a workspace binding: nothing to end
   * (a DOMAIN_ADMIN binding's own change, or its loss, takes the same lock and ends them all).
   */
  private async revokeWhatItGave(tx: Prisma.TransactionClient, b: RoleBindingRow) {
    const r = bindingRevocation(b);
    await lockForChange(tx, r);
    if (r.kind === 'binding') {
      if (await this.bindings.isDomainAdmin(tx, b.domain_id, b.user_id)) return;
    }
    await revokeInTransaction(tx, this.effects, r);
  }

  async get(auth: AuthContext, id: string) {
    return toRoleBindingInfo(await this.visible(auth, id, true));
  }

  private scope(auth: AuthContext) {
    // A USER-scoped token never reaches here (the operations' roles); anything else sees nothing.
    return workspaceScope(auth);
  }

  async list(auth: AuthContext, input: RoleBindingListInput) {
    const scope = [...this.scope(auth), ...eqConditions(input, ['role_binding_id', 'role_type', 'workspace_id', 'role_id', 'user_id'])];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), roleBindingResource, input.query, scope);
    const only = resolveOnly(roleBindingResource, input.query);
    return { results: rows.map((r) => applyOnly(toRoleBindingInfo(r as RoleBindingRow), only)), total_count };
  }

  stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), roleBindingResource, query, this.scope(auth));
  }
}
