import type Redis from 'ioredis';

/**
 * The project directory: identity publishes, per domain, every project (its workspace and group) and
 * every project group (its workspace and parent) to Redis; other modules read it to check a
 * `project_id` or to resolve a project group to its projects, with no call to identity per request.
 * Identity rebuilds a domain's entry on each change and republishes everything at start and whenever
 * its Redis connection comes back, so a Redis restart loses nothing for long.
 */
export interface DirectoryProject {
  project_id: string;
  workspace_id: string;
  project_group_id: string;
  name: string;
}
export interface DirectoryGroup {
  project_group_id: string;
  workspace_id: string;
  parent_group_id: string;
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

const key = (prefix: string, domainId: string) => `${prefix}dir:{${domainId}}`;
const versionKey = (prefix: string, domainId: string) => `${prefix}dir:{${domainId}}:v`;

export class DirectoryPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = '',
  ) {}

  async publish(domainId: string, dir: DomainDirectory): Promise<void> {
    const fields: string[] = ['_', '1'];
    for (const p of dir.projects) fields.push(`p:${p.project_id}`, JSON.stringify([p.workspace_id, p.project_group_id, p.name]));
    for (const g of dir.groups) fields.push(`g:${g.project_group_id}`, JSON.stringify([g.workspace_id, g.parent_group_id]));
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
}

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
    const entry: Cached = { version, projects: new Map(), children: new Map(), groups: new Map(), workspaces: new Map() };
    for (const [field, value] of Object.entries(raw)) {
      if (field.startsWith('p:')) {
        const [workspace_id, project_group_id, name] = JSON.parse(value) as string[];
        const project_id = field.slice(2);
        entry.projects.set(project_id, { project_id, workspace_id, project_group_id, name });
      } else if (field.startsWith('w:')) {
        const [name] = JSON.parse(value) as string[];
        entry.workspaces.set(field.slice(2), { workspace_id: field.slice(2), name });
      } else if (field.startsWith('g:')) {
        const [workspace_id, parent_group_id] = JSON.parse(value) as string[];
        const project_group_id = field.slice(2);
        entry.groups.set(project_group_id, { project_group_id, workspace_id, parent_group_id });
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

  async getGroup(domainId: string, groupId: string): Promise<DirectoryGroup | undefined> {
    return (await this.load(domainId)).groups.get(groupId);
  }

  /** The project ids in a group and in all of its descendant groups. */
  async projectsInGroup(domainId: string, groupId: string): Promise<string[]> {
    const d = await this.load(domainId);
    const groups = new Set<string>();
    const stack = [groupId];
    while (stack.length) {
      const g = stack.pop()!;
      if (groups.has(g)) continue;
      groups.add(g);
      stack.push(...(d.children.get(g) ?? []));
    }
    return [...d.projects.values()].filter((p) => p.project_group_id && groups.has(p.project_group_id)).map((p) => p.project_id);
  }
}
