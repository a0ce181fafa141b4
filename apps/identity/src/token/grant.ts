import type { RoleType, Scope } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Prisma } from '../generated/prisma/client';
import type { DomainRepository } from '../domain/repository';
import type { RoleBindingRepository } from '../role-binding/repository';
import type { UserRepository } from '../user/repository';
import type { WorkspaceRepository } from '../workspace/repository';

/** token/grant's request (identity v2 GrantTokenRequest). */
export interface GrantInput {
  grant_type: 'REFRESH_TOKEN' | 'SYSTEM_TOKEN';
  token: string;
  scope: Scope;
  timeout?: number;
  permissions?: string[];
  domain_id?: string;
  workspace_id?: string;
}

export const authFailure = () => errors.authenticateFailure('Authenticate failure. (credentials are invalid)');

/**
 * A refresh token counts only for the user it was issued to and only until their sessions were ended:
 * issued after the user row was created (a deleted user's token never opens a new user of the same id)
 * and after `refresh_valid_after` (a disable, a new password). Tokens from before `iat_ms` existed are
 * placed at the end of their second for the first check, at its start for the second.
 */
function refreshStillValid(claims: { iat?: number; iat_ms?: number }, user: { created_at: Date; refresh_valid_after: Date | null }): boolean {
  const exact = typeof claims.iat_ms === 'number' && Number.isFinite(claims.iat_ms);
  const earliest = exact ? claims.iat_ms! : (claims.iat ?? 0) * 1000;
  const latest = exact ? claims.iat_ms! : earliest + 999;
  if (latest < user.created_at.getTime()) return false;
  return !user.refresh_valid_after || earliest > user.refresh_valid_after.getTime();
}

/** The repositories a grant reads through (each call given the grant's transaction). */
export interface GrantReads {
  domains: DomainRepository;
  users: UserRepository;
  bindings: RoleBindingRepository;
  workspaces: WorkspaceRepository;
}

/**
 * What token/grant gives for a refresh token's claims: the role, its id and the workspace. Reads the
 * domain, the user, their bindings and the workspace through `tx` (the caller holds the reading lock);
 * throws the grant's refusals.
 */
export async function readGrant(
  tx: Prisma.TransactionClient,
  reads: GrantReads,
  claims: { domain_id: string; user_id: string; iat?: number; iat_ms?: number },
  input: Pick<GrantInput, 'scope' | 'workspace_id'>,
): Promise<{ roleType: RoleType; roleId: string; workspaceId: string }> {
  const domainId = claims.domain_id;
  const [domain, user] = await Promise.all([
    reads.domains.find(domainId, tx),
    reads.users.find(domainId, claims.user_id, tx),
  ]);
  if (!domain || domain.state !== 'ENABLED' || !user || user.state !== 'ENABLED') throw authFailure();
  if (!refreshStillValid(claims, user)) throw errors.authenticateFailure('The session has ended (the user was disabled or their password changed); log in again.');

  const bindings = await reads.bindings.ofUser(tx, domainId, user.user_id);
  const domainAdmin = bindings.find((b) => b.role_type === 'DOMAIN_ADMIN');
  switch (input.scope) {
    case 'DOMAIN':
      if (!domainAdmin) throw errors.permissionDenied('Scope DOMAIN needs the DOMAIN_ADMIN role.');
      return { roleType: 'DOMAIN_ADMIN', roleId: domainAdmin.role_id, workspaceId: '' };
    case 'WORKSPACE': {
      if (!input.workspace_id) throw errors.requiredParameter('workspace_id');
      const ws = await reads.workspaces.find(domainId, input.workspace_id, tx);
      if (!ws) throw errors.notFound('workspace_id', input.workspace_id);
      if (ws.state !== 'ENABLED') throw errors.wrongState('ERROR_WORKSPACE_STATE', `Workspace ${ws.workspace_id} is disabled.`);
      if (domainAdmin) return { roleType: 'WORKSPACE_OWNER', roleId: domainAdmin.role_id, workspaceId: ws.workspace_id };
      const binding = bindings.find((b) => b.workspace_id === ws.workspace_id && b.resource_group === 'WORKSPACE');
      if (!binding) throw errors.permissionDenied(`No role in workspace ${ws.workspace_id}.`);
      return { roleType: binding.role_type as RoleType, roleId: binding.role_id, workspaceId: ws.workspace_id };
    }
    case 'USER':
      return { roleType: 'USER', roleId: '', workspaceId: '' };
    default:
      throw errors.invalidParameter('scope', `scope ${input.scope} cannot be granted with a user's refresh token`);
  }
}
