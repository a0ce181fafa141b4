/**
 * The project directory the member-scoping tests share: groups G > G1, project A in G1 and project B
 * in no group, all in `workspaceId`. `groupUsers` are G's users, so a user there is a member of A
 * through an ancestor group and never of B; publishing it again with `[]` is a removal. (A DomainDirectory
 * of libs/directory, typed by its shape: importing that lib here would make a cycle (its tests import this lib).)
 */
export function membershipDirectory(workspaceId: string, groupUsers: string[]) {
  return {
    groups: [
      { project_group_id: 'G', workspace_id: workspaceId, parent_group_id: '', users: groupUsers },
      { project_group_id: 'G1', workspace_id: workspaceId, parent_group_id: 'G', users: [] },
    ],
    projects: [
      { project_id: 'A', workspace_id: workspaceId, project_group_id: 'G1', name: 'A', users: [] },
      { project_id: 'B', workspace_id: workspaceId, project_group_id: '', name: 'B', users: [] },
    ],
  };
}

/** Runs `fn` with the environment variables set (undefined: unset), then puts them back. */
export function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, value] of Object.entries(v)) {
      if (value === undefined) delete process.env[k];
      else process.env[k] = value;
    }
  };
  apply(vars);
  try {
    return fn();
  } finally {
    apply(saved);
  }
}
