import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { IdentityDeps } from '../deps';
import type { Prisma, PrismaClient } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { checkId, refuseCaseVariant } from '../ids';
import { pruneMemberships } from '../membership';
import { requireDomain } from '../lookups';
import { lockDomainAdmins, otherEnabledAdmins } from '../role/domain-admins';
import { MANAGED_DOMAIN_ADMIN } from '../role/managed';
import { checkPasswordPolicy, hashPassword } from './password';
import { userResource } from './fields';
import { UserRepository, type UserRow } from './repository';
import { toUserInfo, type AuthType } from './responses';
import type { ReadCaller } from '@platform/db';
import { replicaPrisma } from '../replica-prisma';
import { lockForChange, revokeInTransaction } from '../revocation/grant-locks';

export interface UserFields {
  name?: string;
  email?: string;
  language?: string;
  timezone?: string;
  tags?: Record<string, unknown>;
}

export interface CreateUserInput extends UserFields {
  user_id: string;
  password?: string;
  auth_type?: AuthType;
}

export interface UserListInput {
  query?: Query;
  user_id?: string;
  name?: string;
  state?: 'ENABLED' | 'DISABLED' | 'PENDING';
  email?: string;
  auth_type?: AuthType;
}

const ids = (u: UserRow) => ({ domainId: u.domain_id, userId: u.user_id });

const LAST_ADMIN = 'ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED';

function checkTimezone(tz: string | undefined) {
  if (tz === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
  } catch {
    throw errors.invalidParameter('timezone', 'an IANA time zone such as UTC or Asia/Seoul');
  }
}

function checkPassword(password: string) {
  const policy = checkPasswordPolicy(password);
  if (policy) throw errors.invalidParameter('password', policy);
}

/** A new user (the API, and the admin CLI and bootstrap, in their transaction): the row; the caller makes the info. */
export async function createUserInDomain(db: PrismaClient | Prisma.TransactionClient, domainId: string, input: CreateUserInput): Promise<UserRow> {
  checkId('user_id', input.user_id);
  checkTimezone(input.timezone);
  const authType = input.auth_type ?? 'LOCAL';
  if (authType === 'LOCAL') {
    if (!input.password) throw errors.requiredParameter('password');
    checkPassword(input.password);
  } else if (input.password) {
    throw errors.invalidParameter('password', 'an EXTERNAL user has no password: they log in through the identity provider');
  }
  await requireDomain(db, domainId);
  await refuseCaseVariant(db, 'user', domainId, input.user_id);
  const passwordHash = input.password ? await hashPassword(input.password) : '';
  try {
    return await new UserRepository(db).insert({
      domain_id: domainId,
      user_id: input.user_id,
      auth_type: authType,
      password_hash: passwordHash,
      name: input.name ?? '',
      email: input.email ?? '',
      language: input.language ?? 'en',
      timezone: input.timezone ?? 'UTC',
      tags: input.tags ?? {},
    });
  } catch (e) {
    if ((e as { code?: string }).code === 'P2002') throw errors.alreadyExists('user_id', input.user_id);
    throw e;
  }
}

/**
 * Users (upstream UserService): DOMAIN_ADMIN only, in the caller's domain. A LOCAL user has a password
 * meeting the policy; an EXTERNAL user has none and logs in through the domain's identity provider.
 * Disabling or deleting a user, or setting a new password, revokes every access token they hold in
 * every module before answering (their refresh tokens fail at the next grant, which reads the user).
 * The last enabled DOMAIN_ADMIN of a domain can be neither disabled nor deleted.
 */
export class UserService {
  private readonly users: UserRepository;

  constructor(
    private readonly deps: Pick<IdentityDeps, 'prisma' | 'pool' | 'reads' | 'config'>,
    private readonly effects: Effects,
  ) {
    this.users = new UserRepository(deps.prisma);
  }

  private toInfo(u: UserRow, adminRoleId: string | undefined) {
    return toUserInfo(u, adminRoleId, this.deps.config.token.refreshTimeout);
  }

  async info(u: UserRow) {
    return this.toInfo(u, (await this.users.domainAdminRoles(u.domain_id, [u.user_id])).get(u.user_id));
  }

  /** The user; `caller`: a get's read, which the read replica may serve. */
  async find(domainId: string, userId: string, caller?: ReadCaller): Promise<UserRow> {
    const u = caller
      ? await this.deps.reads.withClient(caller, this.deps.prisma, replicaPrisma, (db) => this.users.find(domainId, userId, db))
      : await this.users.find(domainId, userId);
    if (!u) throw errors.notFound('user_id', userId);
    return u;
  }

  async create(auth: AuthContext, input: CreateUserInput) {
    return this.info(await createUserInDomain(this.deps.prisma, auth.domainId, input));
  }

  async update(auth: AuthContext, input: UserFields & { user_id: string; password?: string }) {
    const u = await this.find(auth.domainId, input.user_id);
    checkTimezone(input.timezone);
    let passwordHash: string | undefined;
    if (input.password !== undefined) {
      if (u.auth_type !== 'LOCAL') {
        throw errors.notAllowed('ERROR_UNABLE_TO_RESET_PASSWORD_IN_EXTERNAL_AUTH', `User ${u.user_id} logs in through the identity provider and has no password.`);
      }
      checkPassword(input.password);
      passwordHash = await hashPassword(input.password);
    }
    const updated = await this.deps.prisma.$transaction(async (tx) => {
      // A new password ends every session made with the old one, access and refresh tokens, in the
      // same step as the change: no token/grant or token/issue can straddle it (revocation/grant-locks.ts).
      const endedAt = passwordHash !== undefined ? await revokeInTransaction(tx, this.effects, { kind: 'user', ...ids(u) }) : undefined;
      return this.users.update(tx, u.domain_id, u.user_id, {
        name: input.name,
        email: input.email,
        language: input.language,
        timezone: input.timezone,
        tags: input.tags,
        password: endedAt !== undefined && passwordHash !== undefined ? { hash: passwordHash, endedAt } : undefined,
      });
    });
    return this.info(updated);
  }

  /**
   * Runs `fn` with the domain's admin set locked, refusing when `userId` is its last enabled
   * DOMAIN_ADMIN: two concurrent calls for the last two admins cannot both pass.
   */
  private async withAdminCheck<T>(u: UserRow, fn: (tx: Prisma.TransactionClient, endedAt: Date) => Promise<T>): Promise<T> {
    return this.deps.prisma.$transaction(async (tx) => {
      // The user's lock first, then the admin set's (role-binding/delete takes them in the same order).
      await lockForChange(tx, { kind: 'user', ...ids(u) });
      await lockDomainAdmins(tx, u.domain_id);
      const admin = await this.users.holdsDomainAdmin(tx, u.domain_id, u.user_id, MANAGED_DOMAIN_ADMIN);
      const current = await this.users.find(u.domain_id, u.user_id, tx);
      if (!current) throw errors.notFound('user_id', u.user_id);
      if (admin && current.state === 'ENABLED') {
        const n = await otherEnabledAdmins(tx, u.domain_id, u.user_id);
        if (n === 0) throw errors.notAllowed(LAST_ADMIN, `User ${u.user_id} is the last enabled DOMAIN_ADMIN of the domain.`);
      }
      return fn(tx, await revokeInTransaction(tx, this.effects, { kind: 'user', ...ids(u) }));
    });
  }

  async enable(auth: AuthContext, userId: string) {
    const u = await this.find(auth.domainId, userId);
    const updated = await this.users.setState(this.deps.prisma, u.domain_id, u.user_id, 'ENABLED');
    return this.info(updated);
  }

  async disable(auth: AuthContext, userId: string) {
    const u = await this.find(auth.domainId, userId);
    const updated = await this.withAdminCheck(u, async (tx, endedAt) => {
      // Refresh tokens from before stay refused after a later enable: the user logs in again.
      return this.users.setState(tx, u.domain_id, u.user_id, 'DISABLED', endedAt);
    });
    return this.info(updated);
  }

  /**
   * Deletes the user, their role bindings, and their place in every project's and group's users (a
   * user created later with the same id starts with nothing); republishes the directory.
   */
  async delete(auth: AuthContext, userId: string) {
    const u = await this.find(auth.domainId, userId);
    await this.withAdminCheck(u, async (tx) => {
      await this.users.deleteRoleBindings(tx, u.domain_id, u.user_id);
      await pruneMemberships(tx, u.domain_id, u.user_id);
      await this.users.delete(tx, u.domain_id, u.user_id);
    });
    await this.effects.publish(u.domain_id);
  }

  async get(auth: AuthContext, userId: string) {
    return this.info(await this.find(auth.domainId, userId, auth));
  }

  async list(auth: AuthContext, input: UserListInput) {
    const scope = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' as const }, ...eqConditions(input, ['user_id', 'name', 'state', 'email', 'auth_type'])];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), userResource, input.query, scope);
    const admins = await this.users.domainAdminRoles(auth.domainId, rows.map((r) => (r as UserRow).user_id));
    const only = resolveOnly(userResource, input.query);
    return { results: rows.map((r) => applyOnly(this.toInfo(r as UserRow, admins.get((r as UserRow).user_id)), only)), total_count };
  }

  stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), userResource, query, [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }]);
  }
}
