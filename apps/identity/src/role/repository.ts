import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

/** A row of `role_view` (or of `role`, with is_managed false). */
export interface RoleRow {
  role_id: string;
  domain_id: string;
  name: string;
  role_type: string;
  permissions: string[] | null;
  page_access: string[] | null;
  tags: unknown;
  state: string;
  is_managed?: boolean;
  created_at: Date | null;
  updated_at: Date | null;
}

/** What a new custom role is stored with. */
export interface NewRole {
  role_id: string;
  domain_id: string;
  name: string;
  role_type: string;
  permissions: string[];
  page_access: string[];
  tags: Record<string, unknown>;
}

/** What an update changes. */
export interface RoleChanges {
  name?: string;
  permissions?: string[];
  page_access?: string[];
  tags?: Record<string, unknown>;
}

/** Every read and write of the custom roles' `role` table (list and stat read `role_view` through fields.ts). */
export class RoleRepository {
  /** `db`: the client, or the transaction (a binding's, a grant's) the calls run in. */
  constructor(private readonly db: Db) {}

  /** The custom role by id, any domain's; `db`: the client to read through (a transaction's, or the read replica's for a get). */
  find(roleId: string, db: Db = this.db) {
    return db.role.findUnique({ where: { role_id: roleId } });
  }

  insert(r: NewRole) {
    return this.db.role.create({ data: { ...r, tags: r.tags as Prisma.InputJsonValue } });
  }

  update(tx: Db, roleId: string, c: RoleChanges) {
    return tx.role.update({
      where: { role_id: roleId },
      data: {
        ...(c.name !== undefined && { name: c.name }),
        ...(c.permissions !== undefined && { permissions: c.permissions }),
        ...(c.page_access !== undefined && { page_access: c.page_access }),
        ...(c.tags !== undefined && { tags: c.tags as Prisma.InputJsonValue }),
        updated_at: new Date(),
      },
    });
  }

  setState(tx: Db, roleId: string, state: string) {
    return tx.role.update({ where: { role_id: roleId }, data: { state, updated_at: new Date() } });
  }

  /** Whether a role binding of the domain names the role. */
  async isBound(tx: Db, domainId: string, roleId: string): Promise<boolean> {
    return !!(await tx.roleBinding.findFirst({ where: { domain_id: domainId, role_id: roleId }, select: { role_binding_id: true } }));
  }

  async delete(tx: Db, domainId: string, roleId: string): Promise<void> {
    await tx.role.deleteMany({ where: { role_id: roleId, domain_id: domainId } });
  }
}
