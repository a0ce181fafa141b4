import type { Prisma } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { xactLock } from '../locks';

/**
 * Revocations no grant can outrun (docs/decisions/identity.md). A token is signed from a reading of
 * the user (their state, password, role bindings) and of a workspace. Every change that ends tokens
 * (a user disabled, deleted or given a new password; a role binding deleted or changed; a workspace
 * disabled or deleted) and every reading that a token rests on (token/grant, token/issue) meet on one
 * lock per user and one per workspace (PostgreSQL advisory locks, held until the transaction ends):
 * readers share it, a change takes it alone. Under the lock the change takes T from the database's
 * clock and records "every token issued at or before T" before it commits; a reader takes its own
 * time, the token's issue time, after its reading, still under the lock. So a reading of the old state
 * ended before the change got the lock (issue time < T: refused everywhere), and a reading that waited
 * sees the committed change. One clock (the database's) for both ends: identity replicas' clocks may
 * drift, the comparison is still exact to the millisecond.
 */
type Tx = Prisma.TransactionClient;

const userKey = (domainId: string, userId: string) => `grant-user:${JSON.stringify([domainId, userId])}`;
const workspaceKey = (domainId: string, workspaceId: string) => `grant-workspace:${JSON.stringify([domainId, workspaceId])}`;
const roleKey = (domainId: string, roleId: string) => `grant-role:${JSON.stringify([domainId, roleId])}`;

const lock = (tx: Tx, key: string, shared: boolean) => xactLock(tx, key, { shared });

/** For a reading a token will rest on: the user's state and bindings (and, given, the workspace's) cannot change until the transaction ends. */
export async function lockForReading(tx: Tx, domainId: string, userId: string, workspaceId?: string) {
  if (!workspaceId) return lock(tx, userKey(domainId, userId), true);
  // Both in one round trip, the user's first (a select list is evaluated in order).
  await xactLock(tx, [userKey(domainId, userId), workspaceKey(domainId, workspaceId)], { shared: true });
}

/**
 * For a reading of a custom role (its state, its permissions) that a token or a new binding rests on:
 * the role cannot be disabled, changed or deleted until the transaction ends. Always the last lock a
 * transaction takes (after the user's and the workspace's): a role's own change takes only its lock,
 * so no cycle can form.
 */
export function lockRoleForReading(tx: Tx, domainId: string, roleId: string) {
  return lock(tx, roleKey(domainId, roleId), true);
}

/** The database's clock, in ms (floored): the one clock both issue times and revocation times come from. */
export async function databaseNowMs(tx: Tx): Promise<number> {
  const [{ ms }] = await tx.$queryRawUnsafe<{ ms: number }[]>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms');
  return Math.floor(Number(ms));
}

/** What a change ends: every token of a user, of a workspace, of a user in one workspace (a role binding's), or granted with a role. */
export type Revocation =
  | { kind: 'user'; domainId: string; userId: string }
  | { kind: 'workspace'; domainId: string; workspaceId: string }
  | { kind: 'binding'; domainId: string; userId: string; workspaceId: string }
  | { kind: 'role'; domainId: string; roleId: string };

const changeKey = (r: Revocation) =>
  r.kind === 'workspace' ? workspaceKey(r.domainId, r.workspaceId) : r.kind === 'role' ? roleKey(r.domainId, r.roleId) : userKey(r.domainId, r.userId);

/** Takes the lock a change to what `r` covers holds alone (before checks that may still refuse the change). */
export function lockForChange(tx: Tx, r: Revocation) {
  return lock(tx, changeKey(r), false);
}

/**
 * Call in the transaction that makes the change, before the change: takes the lock alone, then records the
 * revocation at the database's now (T) in every module, and answers T. If recording fails the
 * transaction fails and nothing changed; if the change then fails, sessions were only cut short.
 */
export async function revokeInTransaction(tx: Tx, effects: Effects, r: Revocation): Promise<Date> {
  await lockForChange(tx, r);
  const at = await databaseNowMs(tx);
  if (r.kind === 'user') await effects.revokeUser(r.domainId, r.userId, at);
  else if (r.kind === 'workspace') await effects.revokeWorkspace(r.domainId, r.workspaceId, at);
  else if (r.kind === 'role') await effects.revokeRole(r.domainId, r.roleId, at);
  else await effects.revokeUserInWorkspace(r.domainId, r.userId, r.workspaceId, at);
  return new Date(at);
}
