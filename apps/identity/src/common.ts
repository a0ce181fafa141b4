import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Condition } from '@platform/query';
import type { PrismaClient, Prisma } from './generated/prisma/client';

/** Ids callers choose (users; workspaces and projects through the admin CLI): letters, digits, . _ @ - (at most 128). */
const ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function checkId(key: string, value: string) {
  if (!ID.test(value)) throw errors.invalidParameter(key, 'letters, digits, . _ @ - (at most 128)');
}

type Db = PrismaClient | Prisma.TransactionClient;

/** The tables of ids callers choose, with their id column (a fixed list: never caller text in SQL). */
const CHOSEN_IDS = { user: ['"user"', 'user_id'], workspace: ['workspace', 'workspace_id'], project: ['project', 'project_id'] } as const;

/**
 * Ids that differ only in case ('Admin' beside 'admin') are one id to people and to SSO providers: a
 * new id equal to an existing one of the domain but for case is ERROR_ALREADY_EXISTS, as the same id
 * is. The unique indexes on lower(id) (migration 20261126180000_ids_unique_ignoring_case) settle two
 * creates at once (the loser's P2002 is the same answer).
 */
export async function refuseCaseVariant(db: Db, kind: keyof typeof CHOSEN_IDS, domainId: string, id: string) {
  const [table, column] = CHOSEN_IDS[kind];
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(`SELECT ${column} AS id FROM ${table} WHERE domain_id = $1 AND lower(${column}) = lower($2) LIMIT 1`, domainId, id);
  if (rows.length) throw errors.alreadyExists(column, id);
}

/** The user whose id equals `userId` but for case (at most one: the index), for SSO claims. */
export async function findUserIgnoringCase(db: Db, domainId: string, userId: string): Promise<string | undefined> {
  const rows = await db.$queryRawUnsafe<{ user_id: string }[]>('SELECT user_id FROM "user" WHERE domain_id = $1 AND lower(user_id) = lower($2) LIMIT 1', domainId, userId);
  return rows[0]?.user_id;
}

export async function requireDomain(db: Db, domainId: string) {
  const d = await db.domain.findUnique({ where: { domain_id: domainId } });
  if (!d) throw errors.notFound('domain_id', domainId);
  return d;
}

export async function requireWorkspace(db: Db, domainId: string, workspaceId: string) {
  const w = await db.workspace.findUnique({ where: { domain_id_workspace_id: { domain_id: domainId, workspace_id: workspaceId } } });
  if (!w) throw errors.notFound('workspace_id', workspaceId);
  return w;
}

/**
 * Users who belong to a workspace: a role binding there, or DOMAIN_ADMIN (who acts in every workspace).
 * The first user of `users` who does not is ERROR_NOT_FOUND naming them (project and group users).
 */
export async function checkWorkspaceUsers(db: Db, domainId: string, workspaceId: string, users: string[]) {
  const bindings = await db.roleBinding.findMany({
    where: { domain_id: domainId, user_id: { in: users }, OR: [{ workspace_id: workspaceId }, { role_type: 'DOMAIN_ADMIN' }] },
    select: { user_id: true },
  });
  const known = new Set(bindings.map((b) => b.user_id));
  const missing = users.find((u) => !known.has(u));
  if (missing) throw errors.notFound('user_id', missing);
}

/** The caller's domain, and with a workspace-scoped token their workspace: the scope of workspace-level records. */
export function workspaceScope(auth: AuthContext, key = 'workspace_id'): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE') c.push({ key, value: auth.workspaceId, operator: 'eq' });
  return c;
}

/**
 * Takes `userId` out of the users of every project and project group of a workspace they no longer
 * belong to (no role binding there and not DOMAIN_ADMIN): after a role binding or the user is deleted.
 * Answers whether anything changed (the directory must then be republished).
 */
export async function pruneMemberships(tx: Prisma.TransactionClient, domainId: string, userId: string): Promise<boolean> {
  let changed = 0;
  for (const table of ['project', 'project_group']) {
    changed += await tx.$executeRawUnsafe(
      `UPDATE ${table} t SET users = array_remove(t.users, $2)
       WHERE t.domain_id = $1 AND $2 = ANY(t.users)
         AND NOT EXISTS (SELECT 1 FROM role_binding b WHERE b.domain_id = $1 AND b.user_id = $2
                         AND (b.workspace_id = t.workspace_id OR b.role_type = 'DOMAIN_ADMIN'))`,
      domainId,
      userId,
    );
  }
  return changed > 0;
}

/**
 * Identity's one transaction-scoped advisory lock: on `keys` (several: in one round trip, in their
 * order, a select list being evaluated in order), held until the transaction ends; `shared`: readers
 * share it, a change takes it alone.
 */
export async function xactLock(tx: Prisma.TransactionClient, keys: string | readonly string[], o: { shared?: boolean } = {}) {
  const list = typeof keys === 'string' ? [keys] : keys;
  const fn = o.shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await tx.$executeRawUnsafe(`SELECT ${list.map((_, i) => `${fn}(hashtext($${i + 1}))`).join(', ')}`, ...list);
}

/**
 * Serializes a workspace's structure: project groups created under a parent, moved or deleted, and
 * projects placed in a group, so a move never closes a cycle and nothing lands in a group being deleted.
 */
export function lockWorkspaceStructure(tx: Prisma.TransactionClient, domainId: string, workspaceId: string) {
  return xactLock(tx, `project-group:${domainId}:${workspaceId}`);
}
