import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import type { Condition } from '@platform/query';
import type { DirectoryClient } from './client';

/**
 * The projects a caller is limited to, the one rule every module applies (upstream's `user_projects`,
 * injected for WORKSPACE_MEMBER tokens by python-core's mutation handler and checked by its
 * authorization handler):
 * - a WORKSPACE_MEMBER sees and writes only the projects identity's directory gives them (see
 *   `DirectoryClient.memberProjects`); a row with an empty `project_id` belongs to no project and is
 *   not theirs (upstream's `project_id in user_projects` never matches it);
 * - a request naming a `project_id` the member may not see is refused with ERROR_PERMISSION_DENIED (403),
 *   like upstream's `_check_user_projects`; a record they may not see is simply not found (404);
 * - WORKSPACE_OWNER, DOMAIN_ADMIN (and any other role) get no restriction.
 */
export class ProjectScope {
  /** No restriction. */
  static readonly ALL = new ProjectScope(null);

  constructor(private readonly visible: ReadonlySet<string> | null) {}

  get restricted(): boolean {
    return this.visible !== null;
  }

  /** The visible project ids (sorted), or null when unrestricted. */
  get projectIds(): string[] | null {
    return this.visible ? [...this.visible].sort() : null;
  }

  /** May the caller see a row of this project (for single-row reads and checks)? */
  allows(projectId: string | null | undefined): boolean {
    if (!this.visible) return true;
    return !!projectId && this.visible.has(projectId);
  }

  /** The conditions to AND into a query's scope: none, or `<key> in [visible projects]`. */
  conditions(key = 'project_id'): Condition[] {
    const ids = this.projectIds;
    return ids ? [{ key, value: ids, operator: 'in' }] : [];
  }

  /**
   * A request naming a project (a write's target, a list's `project_id` field): refused with
   * ERROR_PERMISSION_DENIED when the caller may not use it. An absent value passes; see `requireWrite`.
   */
  check(projectId: string | null | undefined, key = 'project_id'): void {
    if (projectId && !this.allows(projectId)) throw errors.permissionDenied(`Permission denied: ${key} ${projectId} is not one of your projects.`);
  }

  /**
   * The target of a create (or of an update that moves a record): a member must name one of their
   * projects, since a record without one would be invisible to them at once.
   */
  requireWrite(projectId: string | null | undefined, key = 'project_id'): void {
    if (this.restricted && !projectId) throw errors.requiredParameter(key);
    this.check(projectId, key);
  }
}

/** The caller's project scope: restricted for WORKSPACE_MEMBER tokens, unrestricted otherwise. */
export async function projectScope(directory: Pick<DirectoryClient, 'memberProjects'>, auth: AuthContext): Promise<ProjectScope> {
  if (auth.roleType !== 'WORKSPACE_MEMBER') return ProjectScope.ALL;
  return new ProjectScope(await directory.memberProjects(auth.domainId, auth.workspaceId, auth.userId));
}
