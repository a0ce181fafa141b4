import type Redis from 'ioredis';

/**
 * The project directory: identity publishes, per domain, every project (its workspace, group and
 * users) and every project group (its workspace, parent and users) to Redis; other modules read it to
 * check a `project_id`, to resolve a project group to its projects and to know which projects a
 * workspace member may see, with no call to identity per request. Identity rebuilds a domain's entry
 * on each change and republishes everything at start and whenever its Redis connection comes back, so
 * a Redis restart loses nothing for long.
 *
 * Layout (one hash per domain, `dir:{<domain>}`, and a version counter `dir:{<domain>}:v`):
 * - `_`: the layout: `1` (no users), `2` (users appended), `3` (project type appended);
 * - `p:<project_id>`: JSON `[workspace_id, project_group_id, name, users?, project_type?]`;
 * - `g:<project_group_id>`: JSON `[workspace_id, parent_group_id, users?]`;
 * - `w:<workspace_id>`: JSON `[name]`.
 * Layouts 2 and 3 only append an element, so an older reader reads a newer entry unchanged, and an
 * older entry reads as "no users" / PRIVATE (a member then sees less until identity republishes: fail
 * closed; a reader of layout 2 does not show PUBLIC projects to members, never more than it should).
 */
export interface DirectoryProject {
  project_id: string;
  workspace_id: string;
  project_group_id: string;
  name: string;
  /** The project's own users (identity `project add-users`); absent in layout 1. */
  users?: string[];
  /** PRIVATE (its users and its groups' users see it) or PUBLIC (every member of its workspace does). */
  project_type?: string;
}
export interface DirectoryGroup {
  project_group_id: string;
  workspace_id: string;
  parent_group_id: string;
  /** The group's users; they see every project of the group and of its descendant groups. */
  users?: string[];
}
export interface DirectoryWorkspace {
  workspace_id: string;
  name: string;
}
export interface DomainDirectory {
  projects: DirectoryProject[];
  groups: DirectoryGroup[];
  workspaces?: DirectoryWorkspace[];
}

const LAYOUT = '3';
const key = (prefix: string, domainId: string) => `${prefix}dir:{${domainId}}`;
const versionKey = (prefix: string, domainId: string) => `${prefix}dir:{${domainId}}:v`;

export class DirectoryPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = '',
  ) {}

  async publish(domainId: string, dir: DomainDirectory): Promise<void> {
    const fields: string[] = ['_', LAYOUT];
    for (const p of dir.projects) {
      fields.push(`p:${p.project_id}`, JSON.stringify([p.workspace_id, p.project_group_id, p.name, p.users ?? [], p.project_type ?? 'PRIVATE']));
    }
    for (const g of dir.groups) fields.push(`g:${g.project_group_id}`, JSON.stringify([g.workspace_id, g.parent_group_id, g.users ?? []]));
    for (const w of dir.workspaces ?? []) fields.push(`w:${w.workspace_id}`, JSON.stringify([w.name]));
    await this.redis
      .multi()
      .del(key(this.prefix, domainId))
      .hset(key(this.prefix, domainId), ...fields)
      .incr(versionKey(this.prefix, domainId))
      .exec();
  }
}

interface Cached {
  version: string | null;
  projects: Map<string, DirectoryProject>;
  children: Map<string, string[]>;
  groups: Map<string, DirectoryGroup>;
  workspaces: Map<string, DirectoryWorkspace>;
  /** Visible projects per `<workspace>\u0000<user>`, computed on first use for this version only. */
  members: Map<string, ReadonlySet<string>>;
  /** names(), made on first use for this version only. */
  names?: DirectoryNames;
}

/** A domain's project and workspace names by id (only those with a name). */
export interface DirectoryNames {
  projects: ReadonlyMap<string, string>;
  workspaces: ReadonlyMap<string, string>;
}

/** Member answers kept per domain and version; past this many users the memo starts afresh. */
const MEMBER_MEMO_LIMIT = 10_000;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Reads the directory; re-reads a domain only when identity has published a new version. */
export class DirectoryClient {
  private cache = new Map<string, Cached>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix = '',
  ) {}

  private async load(domainId: string): Promise<Cached> {
    const version = await this.redis.get(versionKey(this.prefix, domainId));
    const hit = this.cache.get(domainId);
    if (hit && hit.version === version) return hit;
    const raw = await this.redis.hgetall(key(this.prefix, domainId));
    const entry: Cached = { version, projects: new Map(), children: new Map(), groups: new Map(), workspaces: new Map(), members: new Map() };
    for (const [field, value] of Object.entries(raw)) {
      if (field.startsWith('p:')) {
        const [workspace_id, project_group_id, name, users, type] = JSON.parse(value) as [string, string, string, unknown, unknown];
        const project_id = field.slice(2);
        const project_type = type === 'PUBLIC' ? 'PUBLIC' : 'PRIVATE';
        entry.projects.set(project_id, { project_id, workspace_id, project_group_id, name, users: strings(users), project_type });
      } else if (field.startsWith('w:')) {
        const [name] = JSON.parse(value) as string[];
        entry.workspaces.set(field.slice(2), { workspace_id: field.slice(2), name });
      } else if (field.startsWith('g:')) {
        const [workspace_id, parent_group_id, users] = JSON.parse(value) as [string, string, unknown];
        const project_group_id = field.slice(2);
        entry.groups.set(project_group_id, { project_group_id, workspace_id, parent_group_id, users: strings(users) });
        if (parent_group_id) entry.children.set(parent_group_id, [...(entry.children.get(parent_group_id) ?? []), project_group_id]);
      }
    }
    this.cache.set(domainId, entry);
    return entry;
  }

  async getProject(domainId: string, projectId: string): Promise<DirectoryProject | undefined> {
    return (await this.load(domainId)).projects.get(projectId);
  }

  async getWorkspace(domainId: string, workspaceId: string): Promise<DirectoryWorkspace | undefined> {
    return (await this.load(domainId)).workspaces.get(workspaceId);
  }

  /**
   * Every project's and workspace's name of a domain (id → name; a nameless one is left out), made once
   * per published version: for a reader that names many rows at once (cost-analysis' unified rebuild).
   */
  async names(domainId: string): Promise<DirectoryNames> {
    const d = await this.load(domainId);
    if (!d.names) {
      const named = <T extends { name: string }>(m: Map<string, T>) => new Map([...m].filter(([, v]) => v.name).map(([k, v]) => [k, v.name]));
      d.names = { projects: named(d.projects), workspaces: named(d.workspaces) };
    }
    return d.names;
  }

  async getGroup(domainId: string, groupId: string): Promise<DirectoryGroup | undefined> {
    return (await this.load(domainId)).groups.get(groupId);
  }

  /** The project ids in a group and in all of its descendant groups. */
  async projectsInGroup(domainId: string, groupId: string): Promise<string[]> {
    const d = await this.load(domainId);
    const groups = subtree(d, [groupId]);
    return [...d.projects.values()].filter((p) => p.project_group_id && groups.has(p.project_group_id)).map((p) => p.project_id);
  }

  /**
   * The projects of a workspace a member may see (upstream's `user_projects`): its PUBLIC projects,
   * the projects whose users include them, and every project of a group whose users include them or
   * of any descendant of such a group. Computed once per published version and user.
   */
  async memberProjects(domainId: string, workspaceId: string, userId: string): Promise<ReadonlySet<string>> {
    const d = await this.load(domainId);
    const memo = `${workspaceId}\u0000${userId}`;
    const hit = d.members.get(memo);
    if (hit) return hit;
    const own = [...d.groups.values()].filter((g) => g.workspace_id === workspaceId && g.users?.includes(userId)).map((g) => g.project_group_id);
    const groups = subtree(d, own);
    const out = new Set<string>();
    for (const p of d.projects.values()) {
      if (p.workspace_id !== workspaceId) continue;
      if (p.project_type === 'PUBLIC' || p.users?.includes(userId) || (p.project_group_id && groups.has(p.project_group_id))) out.add(p.project_id);
    }
    if (d.members.size >= MEMBER_MEMO_LIMIT) d.members.clear();
    d.members.set(memo, out);
    return out;
  }
}

/** The groups given and all of their descendants (a cycle, which identity never publishes, ends). */
function subtree(d: Cached, roots: string[]): Set<string> {
  const groups = new Set<string>();
  const stack = [...roots];
  while (stack.length) {
    const g = stack.pop()!;
    if (groups.has(g)) continue;
    groups.add(g);
    stack.push(...(d.children.get(g) ?? []));
  }
  return groups;
}
