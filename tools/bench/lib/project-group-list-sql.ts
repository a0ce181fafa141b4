// The SQL our query compiler (libs/query) emits for the list benchmark's request, so that the raw
// server runs exactly the statement identity runs: bundled by tools/bench/identity-project-group.mjs
// (tools/build/bundle.mjs) and loaded by the raw server.
import { compileList } from '@platform/query';
import { projectGroupResource } from '../../../apps/identity/src/project-group/fields';

/** project-group/list as the benchmark calls it: a workspace owner's page of `limit` groups whose name contains `text`. */
export function listStatement(domainId: string, workspaceId: string, text: string, limit: number) {
  return compileList(projectGroupResource, { filter: [{ key: 'name', value: text, operator: 'contain' }], page: { start: 1, limit } }, [
    { key: 'domain_id', value: domainId, operator: 'eq' },
    { key: 'workspace_id', value: workspaceId, operator: 'eq' },
  ]);
}
