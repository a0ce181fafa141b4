import type { AuthContext } from '@platform/auth';
import { projectScope, type DirectoryClient, type ProjectScope } from '@platform/directory';
import { errors } from '@platform/errors';
import type { Condition } from '@platform/query';

/** What a caller may see: their domain, and with a workspace-scoped token only that workspace. */
export function visibility(auth: AuthContext): Condition[] {
  const c: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
  if (auth.scope === 'WORKSPACE' || auth.workspaceId) c.push({ key: 'workspace_id', value: auth.workspaceId, operator: 'eq' });
  return c;
}

interface Filters {
  filter?: Condition[] | null;
  filter_or?: Condition[] | null;
}

/**
 * The query parts upstream rewrites before querying (cloud_service_manager `change_filter`):
 * - `project_group_id` conditions become `project_id` conditions over the projects of the group and of
 *   all its descendant groups (from the directory identity publishes);
 * - unless the caller filters on `state`, only ACTIVE records are seen (deleted ones are kept, soft).
 */
export class QueryScoper {
  constructor(private readonly directory: DirectoryClient) {}

  /** The caller's project restriction (a WORKSPACE_MEMBER sees only their projects; see libs/directory). */
  projects(auth: AuthContext): Promise<ProjectScope> {
    return projectScope(this.directory, auth);
  }

  /** Project ids of these groups (and their descendants) that the caller may see. */
  async projectsOfGroups(auth: AuthContext, groupIds: string[]): Promise<string[]> {
    const out = new Set<string>();
    for (const g of groupIds) {
      const group = await this.directory.getGroup(auth.domainId, g);
      if (!group || (auth.workspaceId && group.workspace_id !== auth.workspaceId)) continue;
      for (const p of await this.directory.projectsInGroup(auth.domainId, g)) out.add(p);
    }
    return [...out];
  }

  private async rewrite(auth: AuthContext, conds: Condition[] | null | undefined, errKey: string): Promise<Condition[] | undefined> {
    if (!conds) return undefined;
    const out: Condition[] = [];
    for (const [i, c] of conds.entries()) {
      if (c.key !== 'project_group_id') {
        out.push(c);
        continue;
      }
      const key = `${errKey}[${i}]`;
      const negate = c.operator === 'not' || c.operator === 'not_in';
      const many = c.operator === 'in' || c.operator === 'not_in';
      if (!['eq', 'not', 'in', 'not_in'].includes(c.operator)) {
        throw errors.invalidParameter(`${key}.operator`, 'project_group_id takes eq, not, in or not_in');
      }
      const values = many ? c.value : [c.value];
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) {
        throw errors.invalidParameter(`${key}.value`, many ? 'expected a list of project group ids' : 'expected a project group id');
      }
      const projects = await this.projectsOfGroups(auth, values as string[]);
      out.push({ key: 'project_id', value: projects, operator: negate ? 'not_in' : 'in' });
    }
    return out;
  }

  /**
   * The query with its filters rewritten, and the conditions ANDed to it: visibility (with a member's
   * projects), `extra` (the list request's own filter fields) and the default state.
   */
  async apply<Q extends Filters>(auth: AuthContext, query: Q, extra: Condition[] = [], prefix = 'query'): Promise<{ query: Q; scope: Condition[] }> {
    const filter = await this.rewrite(auth, query.filter, `${prefix}.filter`);
    const filter_or = await this.rewrite(auth, query.filter_or, `${prefix}.filter_or`);
    const scope = [...visibility(auth), ...(await this.projects(auth)).conditions(), ...extra];
    const mentionsState = [...(filter ?? []), ...(filter_or ?? []), ...extra].some((c) => c.key === 'state');
    if (!mentionsState) scope.push({ key: 'state', value: 'ACTIVE', operator: 'eq' });
    return { query: { ...query, filter, filter_or }, scope };
  }
}
