import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** The client, or a transaction's. */
type Db = PrismaClient | Prisma.TransactionClient;

/** A `role_binding` row as stored. */
export interface RoleBindingRow {
  role_binding_id: string;
  domain_id: string;
  user_id: string;
  role_type: string;
  role_id: string;
  resource_group: string;
  workspace_id: string;
  created_at: Date;
}

/** What a new binding is stored with. */
export type NewRoleBinding = Omit<RoleBindingRow, 'created_at'>;

/** Every read and write of the `role_binding` table (list and stat read through fields.ts). */
export class RoleBindingRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs fn in one transaction; the methods that take `tx` run in it. */
  transaction<T>(fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(fn);
  }

  /** The binding by id; `db`: the client to read through (the read replica's for a get). */
  find(id: string, db: Db = this.prisma): Promise<RoleBindingRow | null> {
    return db.roleBinding.findUnique({ where: { role_binding_id: id } });
  }

  /** Every binding of the user in the domain; `tx`: the client to read through (a grant's transaction). */
  ofUser(tx: Db, domainId: string, userId: string): Promise<RoleBindingRow[]> {
    return tx.roleBinding.findMany({ where: { domain_id: domainId, user_id: userId } });
  }

  /** Whether the domain has the user. */
  async userExists(tx: Db, domainId: string, userId: string): Promise<boolean> {
    return !!(await tx.user.findUnique({ where: { domain_id_user_id: { domain_id: domainId, user_id: userId } } }));
  }

  /** Whether the user has a binding in the workspace ('' : the domain). */
  async exists(tx: Db, domainId: string, userId: string, workspaceId: string): Promise<boolean> {
    return !!(await tx.roleBinding.findFirst({ where: { domain_id: domainId, user_id: userId, workspace_id: workspaceId } }));
  }

  /** Whether the user has a DOMAIN_ADMIN binding. */
  async isDomainAdmin(tx: Db, domainId: string, userId: string): Promise<boolean> {
    return !!(await tx.roleBinding.findFirst({ where: { domain_id: domainId, user_id: userId, role_type: 'DOMAIN_ADMIN' }, select: { role_binding_id: true } }));
  }

  insert(tx: Db, b: NewRoleBinding): Promise<RoleBindingRow> {
    return tx.roleBinding.create({ data: b });
  }

  setRole(tx: Db, id: string, roleId: string, roleType: string): Promise<RoleBindingRow> {
    return tx.roleBinding.update({ where: { role_binding_id: id }, data: { role_id: roleId, role_type: roleType } });
  }

  async delete(tx: Db, id: string): Promise<void> {
    await tx.roleBinding.delete({ where: { role_binding_id: id } });
  }
}
