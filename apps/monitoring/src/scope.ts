import type { AuthContext } from '@platform/auth';
import { projectScope, type DirectoryClient, type ProjectScope } from '@platform/directory';
import type { Condition } from '@platform/query';

/**
 * What a caller may see of workspace resources (webhooks, events): their domain and, with a
 * workspace-scoped token, their workspace. A DOMAIN_ADMIN's domain-scoped token sees every workspace.
 */
export function workspaceScope(auth: AuthContext): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE' || auth.roleType !== 'DOMAIN_ADMIN') c.push({ key: 'workspace_id', value: auth.workspaceId, operator: 'eq' });
  return c;
}

export function visibleInWorkspace(auth: AuthContext, row: { domain_id: string; workspace_id: string }): boolean {
  if (row.domain_id !== auth.domainId) return false;
  if (auth.scope === 'WORKSPACE' || auth.roleType !== 'DOMAIN_ADMIN') return row.workspace_id === auth.workspaceId;
  return true;
}

/** `{key: value}` request filters as eq conditions (the list operations' named filters). */
export function equalsFilters(input: Record<string, unknown>, keys: Record<string, string>): Condition[] {
  return Object.entries(keys)
    .filter(([param]) => input[param] !== undefined)
    .map(([param, key]) => ({ key, value: input[param], operator: 'eq' }));
}

/**
 * Workspace resources of a project (webhooks, events) as a caller may see them: the workspace scope
 * above and, for a WORKSPACE_MEMBER, only their projects (the shared rule of libs/directory).
 */
export class ProjectAccess {
  constructor(readonly directory: DirectoryClient) {}

  projects(auth: AuthContext): Promise<ProjectScope> {
    return projectScope(this.directory, auth);
  }

  /** The scope of a list or stat; a request field naming a project not the member's is refused (403). */
  async conditions(auth: AuthContext, requestedProject?: unknown): Promise<Condition[]> {
    const projects = await this.projects(auth);
    if (typeof requestedProject === 'string') projects.check(requestedProject);
    return [...workspaceScope(auth), ...projects.conditions()];
  }

  async visible(auth: AuthContext, row: { domain_id: string; workspace_id: string; project_id: string }): Promise<boolean> {
    return visibleInWorkspace(auth, row) && (await this.projects(auth)).allows(row.project_id);
  }
}
