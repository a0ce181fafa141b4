import { OPERATION_PATHS } from './generated';
import type { OperationPath } from './types';

/** A resource of the API, `<module>.<Resource>` (identity.ProjectGroup), and its verbs. */
export interface ResourceInfo {
  name: string;
  module: string;
  /** The path segment, e.g. `project-group`. */
  segment: string;
  version: string;
  /** verb (as in the path, e.g. `change-parent-group`) -> operation path */
  verbs: Map<string, OperationPath>;
}

const pascal = (segment: string) => segment.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
const versionNumber = (v: string) => Number(v.replace(/^v/, '')) || 0;

/**
 * The resources, derived from the operation paths of the OpenAPI documents
 * (`/<module>/<version>/<resource>/<verb>`). Where a resource exists in two versions, the newest wins.
 */
export function resourceTable(paths: readonly string[] = OPERATION_PATHS): Map<string, ResourceInfo> {
  const table = new Map<string, ResourceInfo>();
  for (const path of paths) {
    const parts = path.split('/');
    if (parts.length !== 5) continue;
    const [, module, version, segment, verb] = parts;
    const name = `${module}.${pascal(segment)}`;
    let r = table.get(name);
    if (!r || versionNumber(version) > versionNumber(r.version)) {
      r = { name, module, segment, version, verbs: new Map() };
      table.set(name, r);
    }
    if (r.version === version) r.verbs.set(verb, path as OperationPath);
  }
  return new Map([...table.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** A verb as the user typed it (`change_parent_group`, `changeParentGroup`) as the path has it. */
export const normalizeVerb = (verb: string) => verb.replace(/_/g, '-').replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** The resource a user named, case-insensitively (`identity.project-group`, `Identity.ProjectGroup`). */
export function findResource(table: Map<string, ResourceInfo>, name: string): ResourceInfo | undefined {
  const exact = table.get(name);
  if (exact) return exact;
  const [module, resource = ''] = name.split('.');
  const wanted = `${module}.${pascal(normalizeVerb(resource))}`.toLowerCase();
  return [...table.values()].find((r) => r.name.toLowerCase() === wanted);
}
