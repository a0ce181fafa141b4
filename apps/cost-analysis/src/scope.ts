import type { AuthContext, RoleType } from '@platform/auth';
import type { Condition } from '@platform/query';

export const ADMIN_AND_OWNER: readonly RoleType[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER'];

/** A DOMAIN-level record (a domain data source, its jobs and costs nobody else owns) has workspace "*". */
export const DOMAIN_WORKSPACE = '*';

/**
 * The rows a caller sees: the token's domain, and in a workspace-scoped token only that workspace
 * (plus domain-level records where `withDomainLevel`, as upstream shows domain data sources to workspaces).
 */
export function visibility(auth: AuthContext, withDomainLevel = false): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE') {
    c.push(
      withDomainLevel
        ? { key: 'workspace_id', value: [auth.workspaceId, DOMAIN_WORKSPACE], operator: 'in' }
        : { key: 'workspace_id', value: auth.workspaceId, operator: 'eq' },
    );
  }
  return c;
}

/** Same check for one loaded record. */
export function canSee(auth: AuthContext, row: { domain_id: string; workspace_id: string }, withDomainLevel = false): boolean {
  if (row.domain_id !== auth.domainId) return false;
  if (auth.scope !== 'WORKSPACE') return true;
  return row.workspace_id === auth.workspaceId || (withDomainLevel && row.workspace_id === DOMAIN_WORKSPACE);
}
