import type { DirectoryClient } from '@platform/directory';
import type { Queryable } from '../db';
import { COST_WITH_TASK } from '../cost-rows';

/**
 * Past this many projects and workspaces in a domain's directory, a rebuild sends PostgreSQL only the
 * names its rows need (found by a `SELECT DISTINCT` over the months' cost rows) rather than all of them.
 */
export const WHOLE_DIRECTORY_NAMES_MAX = 20_000;

/**
 * Project and workspace names from identity's directory for a rebuild of `months`, as JSON objects
 * (id → name) for the INSERT, which falls back to the id for an id not in them (upstream's fallback,
 * also for a nameless project). The worker holds the domain's whole directory anyway: sending all of
 * its names (up to WHOLE_DIRECTORY_NAMES_MAX) spares a pass over the months' cost rows to find the ids
 * (0.11–0.17 s of a 200k-row rebuild, issue #31). Either way the same names reach the same rows.
 */
export async function directoryNames(db: Queryable, directory: DirectoryClient, domainId: string, months: string[], wholeMax = WHOLE_DIRECTORY_NAMES_MAX) {
  const all = await directory.names(domainId);
  let projects = all.projects;
  let workspaces = all.workspaces;
  if (projects.size + workspaces.size > wholeMax) {
    const { rows } = await db.query<{ project_id: string; workspace_id: string }>(
      `SELECT DISTINCT c.project_id, c.workspace_id FROM ${COST_WITH_TASK} WHERE t.domain_id = $1 AND c.billed_month = ANY($2::text[])`,
      [domainId, months],
    );
    const pick = (from: ReadonlyMap<string, string>, ids: string[]) => new Map(ids.filter((id) => from.has(id)).map((id) => [id, from.get(id)!]));
    projects = pick(all.projects, rows.map((r) => r.project_id));
    workspaces = pick(all.workspaces, rows.map((r) => r.workspace_id));
  }
  // Object.fromEntries defines own properties: an id such as `__proto__` stays a plain key.
  return { projects: JSON.stringify(Object.fromEntries(projects)), workspaces: JSON.stringify(Object.fromEntries(workspaces)) };
}
