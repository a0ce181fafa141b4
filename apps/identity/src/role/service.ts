import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, eqConditions, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { lockForChange, lockRoleForReading, revokeInTransaction } from '../revocation/grant-locks';
import { replicaPrisma } from '../replica-prisma';
import { roleResource } from './fields';
import { MANAGED_NAMES, managedRow } from './managed';
import { RoleRepository, type RoleRow } from './repository';
import { toBasicRoleInfo, toRoleInfo, type CustomRoleType } from './responses';

type Db = Prisma.TransactionClient | IdentityDeps['prisma'];

/**
 * The role `roleId` of `domainId`, managed or the domain's own; ERROR_NOT_FOUND otherwise (another
 * domain's role is not found, whatever its id). `lock`: read it under the role's reading lock (a
 * binding or a grant resting on it), so it cannot be disabled, changed or deleted before commit.
 */
export async function findRole(db: Db, domainId: string, roleId: string, o: { lock?: boolean } = {}): Promise<RoleRow> {
  const managed = managedRow(domainId, roleId);
  if (managed) return managed;
  if (o.lock) await lockRoleForReading(db as Prisma.TransactionClient, domainId, roleId);
  const r = await new RoleRepository(db).find(roleId);
  if (!r || r.domain_id !== domainId) throw errors.notFound('role_id', roleId);
  return { ...r, is_managed: false };
}

/**
 * The permissions a token granted with `role` carries: a custom role's list, or, when it lists none,
 * every permission its role type allows (`*`), as upstream's authorization handler reads an empty list.
 */
export function rolePermissions(role: Pick<RoleRow, 'permissions'>): string[] {
  return role.permissions?.length ? role.permissions : ['*'];
}

export interface RoleListInput {
  query?: Query;
  role_id?: string;
  name?: string;
  role_type?: CustomRoleType;
  state?: 'ENABLED' | 'DISABLED';
}

export interface RoleCreateInput {
  name: string;
  role_type: CustomRoleType;
  permissions?: string[];
  page_access?: string[];
  tags?: Record<string, unknown>;
}

export interface RoleUpdateInput {
  role_id: string;
  name?: string;
  permissions?: string[];
  page_access?: string[];
  tags?: Record<string, unknown>;
}

const managedRefused = (roleId: string) => errors.permissionDenied(`Role ${roleId} is managed: it cannot be changed, disabled or deleted.`);
const dedupe = (xs: string[] | undefined) => (xs === undefined ? undefined : [...new Set(xs)]);
const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * Roles (upstream RoleService): the three managed roles every domain has, built in and unchangeable,
 * and the domain's custom roles, which its DOMAIN_ADMIN creates, changes, enables, disables and
 * deletes. A custom role's `permissions` narrow what its holders may call (prefix match, upstream's);
 * an empty list gives its role type's rights. Disabling a role, or changing its permissions, ends every
 * token granted with it in every module at once (an `r` revocation, under the role's lock that grants
 * share); a role still bound cannot be deleted. Reads: every workspace role (list-basic-role: USER).
 */
export class RoleService {
  private readonly roles: RoleRepository;

  constructor(
    private readonly deps: Pick<IdentityDeps, 'prisma' | 'reads'>,
    private readonly effects: Effects,
  ) {
    this.roles = new RoleRepository(deps.prisma);
  }

  private async custom(auth: AuthContext, roleId: string): Promise<RoleRow> {
    if (managedRow(auth.domainId, roleId)) throw managedRefused(roleId);
    return findRole(this.deps.prisma, auth.domainId, roleId);
  }

  private nameTaken(name: string) {
    return errors.alreadyExists('name', name);
  }

  async create(auth: AuthContext, input: RoleCreateInput) {
    if (Object.values(MANAGED_NAMES).includes(input.name)) throw this.nameTaken(input.name);
    try {
      const r = await this.roles.insert({
        role_id: generateId('role'),
        domain_id: auth.domainId,
        name: input.name,
        role_type: input.role_type,
        permissions: dedupe(input.permissions) ?? [],
        page_access: dedupe(input.page_access) ?? [],
        tags: input.tags ?? {},
      });
      return toRoleInfo({ ...r, is_managed: false });
    } catch (e) {
      if ((e as { code?: string }).code === 'P2002') throw this.nameTaken(input.name);
      throw e;
    }
  }

  async update(auth: AuthContext, input: RoleUpdateInput) {
    const before = await this.custom(auth, input.role_id);
    if (input.name !== undefined && Object.values(MANAGED_NAMES).includes(input.name)) throw this.nameTaken(input.name);
    const permissions = dedupe(input.permissions);
    try {
      const r = await this.deps.prisma.$transaction(async (tx) => {
        const now = await this.lockedRole(tx, auth, before.role_id);
        // New permissions: tokens granted with the old ones end (the holders grant again and get the new ones).
        if (permissions !== undefined && !sameSet(permissions, now.permissions)) {
          await revokeInTransaction(tx, this.effects, { kind: 'role', domainId: auth.domainId, roleId: now.role_id });
        }
        return this.roles.update(tx, now.role_id, { name: input.name, permissions, page_access: dedupe(input.page_access), tags: input.tags });
      });
      return toRoleInfo({ ...r, is_managed: false });
    } catch (e) {
      if ((e as { code?: string }).code === 'P2002' && input.name !== undefined) throw this.nameTaken(input.name);
      throw e;
    }
  }

  /** Under the role's lock (alone): the role as it is now, or ERROR_NOT_FOUND (deleted meanwhile). */
  private async lockedRole(tx: Prisma.TransactionClient, auth: AuthContext, roleId: string) {
    await lockForChange(tx, { kind: 'role', domainId: auth.domainId, roleId });
    const now = await this.roles.find(roleId, tx);
    if (!now || now.domain_id !== auth.domainId) throw errors.notFound('role_id', roleId);
    return now;
  }

  async enable(auth: AuthContext, roleId: string) {
    const before = await this.custom(auth, roleId);
    const r = await this.deps.prisma.$transaction(async (tx) => {
      const now = await this.lockedRole(tx, auth, before.role_id);
      return this.roles.setState(tx, now.role_id, 'ENABLED');
    });
    return toRoleInfo({ ...r, is_managed: false });
  }

  /**
   * Disable: in one transaction, under the role's lock (token/grant shares it while it reads the role),
   * record "every token granted with this role up to T" in every module, then change the state. A grant
   * that read the role before got an issue time before T (refused everywhere); one that waited reads
   * DISABLED and is refused.
   */
  async disable(auth: AuthContext, roleId: string) {
    const before = await this.custom(auth, roleId);
    const r = await this.deps.prisma.$transaction(async (tx) => {
      const now = await this.lockedRole(tx, auth, before.role_id);
      await revokeInTransaction(tx, this.effects, { kind: 'role', domainId: auth.domainId, roleId: now.role_id });
      return this.roles.setState(tx, now.role_id, 'DISABLED');
    });
    return toRoleInfo({ ...r, is_managed: false });
  }

  /** Delete: refused while a binding names the role (upstream's ERROR_ROLE_IN_USED_AT_ROLE_BINDING; bindings share the role's lock). */
  async delete(auth: AuthContext, roleId: string) {
    const before = await this.custom(auth, roleId);
    await this.deps.prisma.$transaction(async (tx) => {
      await this.lockedRole(tx, auth, before.role_id);
      if (await this.roles.isBound(tx, auth.domainId, before.role_id)) throw errors.conflict('ERROR_ROLE_IN_USED_AT_ROLE_BINDING', `Role is in used at RoleBinding. (role_id = ${before.role_id})`);
      await this.roles.delete(tx, auth.domainId, before.role_id);
    });
  }

  async get(auth: AuthContext, roleId: string) {
    const managed = managedRow(auth.domainId, roleId);
    if (managed) return toRoleInfo(managed);
    const r = await this.deps.reads.withClient(auth, this.deps.prisma, replicaPrisma, (db) => this.roles.find(roleId, db));
    if (!r || r.domain_id !== auth.domainId) throw errors.notFound('role_id', roleId);
    return toRoleInfo({ ...r, is_managed: false });
  }

  private scope(auth: AuthContext, input: RoleListInput): Condition[] {
    return [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }, ...eqConditions(input, ['role_id', 'name', 'role_type', 'state'])];
  }

  async list(auth: AuthContext, input: RoleListInput) {
    const { rows, total_count } = await runList(this.deps.reads.for(auth), roleResource, input.query, this.scope(auth, input));
    const only = resolveOnly(roleResource, input.query);
    return { results: rows.map((r) => applyOnly(toRoleInfo(r as RoleRow), only)), total_count };
  }

  /** list-basic-role (USER tokens): the roles of the caller's domain, without permissions, page access or tags. */
  async listBasic(auth: AuthContext, input: RoleListInput) {
    const { rows, total_count } = await runList(this.deps.reads.for(auth), roleResource, input.query, this.scope(auth, input));
    const only = resolveOnly(roleResource, input.query);
    return { results: rows.map((r) => applyOnly(toBasicRoleInfo(r as RoleRow), only)), total_count };
  }

  stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), roleResource, query, this.scope(auth, {}));
  }
}
