import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

/** A `user` row as stored (the password hash and the MFA secret never leave identity's services). */
export interface UserRow {
  domain_id: string;
  user_id: string;
  name: string;
  email: string;
  password_hash: string;
  auth_type: string;
  state: string;
  mfa_secret: string | null;
  mfa_enabled: boolean;
  language: string;
  timezone: string;
  tags: unknown;
  created_at: Date;
  last_accessed_at: Date | null;
  refresh_valid_after: Date | null;
}

/** What a new user is stored with. */
export interface NewUser {
  domain_id: string;
  user_id: string;
  auth_type: string;
  password_hash: string;
  name: string;
  email: string;
  language: string;
  timezone: string;
  tags: Record<string, unknown>;
}

/** What an update changes (a new password with the time sessions before it end). */
export interface UserChanges {
  name?: string;
  email?: string;
  language?: string;
  timezone?: string;
  tags?: Record<string, unknown>;
  password?: { hash: string; endedAt: Date };
}

const key = (domainId: string, userId: string) => ({ domain_id_user_id: { domain_id: domainId, user_id: userId } });

/** Every read and write of the `user` table, and the role bindings that make a user DOMAIN_ADMIN (list and stat read through fields.ts). */
export class UserRepository {
  /** `db`: the client, or the transaction (the admin CLI's, bootstrap's, a grant's) the calls run in. */
  constructor(private readonly db: Db) {}

  /** The user in the domain; `db`: the client to read through (a transaction's, or the read replica's for a get). */
  find(domainId: string, userId: string, db: Db = this.db): Promise<UserRow | null> {
    return db.user.findUnique({ where: key(domainId, userId) });
  }

  insert(u: NewUser): Promise<UserRow> {
    return this.db.user.create({ data: { ...u, tags: u.tags as Prisma.InputJsonValue } });
  }

  update(tx: Db, domainId: string, userId: string, c: UserChanges): Promise<UserRow> {
    return tx.user.update({
      where: key(domainId, userId),
      data: {
        ...(c.name !== undefined && { name: c.name }),
        ...(c.email !== undefined && { email: c.email }),
        ...(c.language !== undefined && { language: c.language }),
        ...(c.timezone !== undefined && { timezone: c.timezone }),
        ...(c.tags !== undefined && { tags: c.tags as Prisma.InputJsonValue }),
        ...(c.password !== undefined && { password_hash: c.password.hash, refresh_valid_after: c.password.endedAt }),
      },
    });
  }

  /** Records a login's time. */
  async touch(tx: Db, domainId: string, userId: string, at: Date): Promise<void> {
    await tx.user.update({ where: key(domainId, userId), data: { last_accessed_at: at } });
  }

  /** Turns MFA on with its secret (sealed). */
  async enableMfa(domainId: string, userId: string, sealedSecret: string): Promise<void> {
    await this.db.user.update({ where: key(domainId, userId), data: { mfa_enabled: true, mfa_secret: sealedSecret } });
  }

  /** Sets the state; with `refreshValidAfter`, refresh tokens from before it stop working. */
  setState(tx: Db, domainId: string, userId: string, state: string, refreshValidAfter?: Date): Promise<UserRow> {
    return tx.user.update({ where: key(domainId, userId), data: { state, ...(refreshValidAfter && { refresh_valid_after: refreshValidAfter }) } });
  }

  /** The role id of each user's DOMAIN_ADMIN binding (users without one absent). */
  async domainAdminRoles(domainId: string, userIds: string[]): Promise<Map<string, string>> {
    if (!userIds.length) return new Map();
    const rows = await this.db.roleBinding.findMany({
      where: { domain_id: domainId, role_type: 'DOMAIN_ADMIN', user_id: { in: userIds } },
      select: { user_id: true, role_id: true },
    });
    return new Map(rows.map((r) => [r.user_id, r.role_id]));
  }

  /** Whether the user holds the role `roleId` as DOMAIN_ADMIN. */
  async holdsDomainAdmin(tx: Db, domainId: string, userId: string, roleId: string): Promise<boolean> {
    return !!(await tx.roleBinding.findFirst({ where: { domain_id: domainId, user_id: userId, role_type: 'DOMAIN_ADMIN', role_id: roleId } }));
  }

  async deleteRoleBindings(tx: Db, domainId: string, userId: string): Promise<void> {
    await tx.roleBinding.deleteMany({ where: { domain_id: domainId, user_id: userId } });
  }

  async delete(tx: Db, domainId: string, userId: string): Promise<void> {
    await tx.user.delete({ where: key(domainId, userId) });
  }
}
