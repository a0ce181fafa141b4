import { errors } from '@platform/errors';
import type { PrismaClient, Prisma } from './generated/prisma/client';

// The ids callers choose: their form, and their uniqueness ignoring case.

/** Ids callers choose (users; workspaces and projects through the admin CLI): letters, digits, . _ @ - (at most 128). */
const ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

export function checkId(key: string, value: string) {
  if (!ID.test(value)) throw errors.invalidParameter(key, 'letters, digits, . _ @ - (at most 128)');
}

/** The client, or a transaction's. */
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
