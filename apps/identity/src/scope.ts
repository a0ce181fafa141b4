import type { AuthContext } from '@platform/auth';
import type { Condition } from '@platform/query';

/** The caller's domain, and with a workspace-scoped token their workspace: the scope of workspace-level records. */
export function workspaceScope(auth: AuthContext, key = 'workspace_id'): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE') c.push({ key, value: auth.workspaceId, operator: 'eq' });
  return c;
}
