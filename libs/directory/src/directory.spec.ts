import type { AuthContext } from '@platform/auth';
import { isApiError } from '@platform/errors';
import { createTestRedis } from '@platform/testing';
import { DirectoryClient, DirectoryPublisher, projectScope, ProjectScope, type DomainDirectory } from './index';

describe('directory', () => {
  const r = createTestRedis('directory');
  afterAll(() => r.cleanup());

  it('publishes projects and groups and resolves a group tree to its projects', async () => {
    const pub = new DirectoryPublisher(r.redis, r.prefix);
    const client = new DirectoryClient(r.redis, r.prefix);
    await pub.publish('d1', {
      groups: [
        { project_group_id: 'pg-a', workspace_id: 'w1', parent_group_id: '' },
        { project_group_id: 'pg-b', workspace_id: 'w1', parent_group_id: 'pg-a' },
        { project_group_id: 'pg-c', workspace_id: 'w1', parent_group_id: 'pg-b' },
        { project_group_id: 'pg-x', workspace_id: 'w1', parent_group_id: '' },
      ],
      projects: [
        { project_id: 'p1', workspace_id: 'w1', project_group_id: 'pg-a', name: 'one' },
        { project_id: 'p2', workspace_id: 'w1', project_group_id: 'pg-c', name: 'two' },
        { project_id: 'p3', workspace_id: 'w1', project_group_id: 'pg-x', name: 'three' },
        { project_id: 'p4', workspace_id: 'w1', project_group_id: '', name: 'four' },
      ],
      workspaces: [{ workspace_id: 'w1', name: 'Production' }],
    });
    expect(await client.getWorkspace('d1', 'w1')).toEqual({ workspace_id: 'w1', name: 'Production' });
    expect(await client.getWorkspace('d1', 'w2')).toBeUndefined();
    expect(await client.getProject('d1', 'p2')).toEqual({ project_id: 'p2', workspace_id: 'w1', project_group_id: 'pg-c', name: 'two', users: [], project_type: 'PRIVATE' });
    expect(await client.getProject('d2', 'p2')).toBeUndefined();
    expect((await client.projectsInGroup('d1', 'pg-a')).sort()).toEqual(['p1', 'p2']);
    expect(await client.projectsInGroup('d1', 'pg-b')).toEqual(['p2']);
    expect(await client.projectsInGroup('d1', 'pg-none')).toEqual([]);

    const names = await client.names('d1');
    expect(Object.fromEntries(names.projects)).toEqual({ p1: 'one', p2: 'two', p3: 'three', p4: 'four' });
    expect(names.workspaces.get('w1')).toBe('Production');
    expect(await client.names('d1')).toBe(names); // made once per version
    expect((await client.names('d2')).projects.size).toBe(0);

    // A new version is picked up; the old state is gone. A nameless project is not in names().
    await pub.publish('d1', {
      groups: [],
      projects: [
        { project_id: 'p9', workspace_id: 'w2', project_group_id: '', name: 'nine' },
        { project_id: 'p0', workspace_id: 'w2', project_group_id: '', name: '' },
        { project_id: '__proto__', workspace_id: 'w2', project_group_id: '', name: 'proto' },
      ],
    });
    expect(await client.getProject('d1', 'p2')).toBeUndefined();
    expect((await client.getProject('d1', 'p9'))?.workspace_id).toBe('w2');
    const again = await client.names('d1');
    expect(again).not.toBe(names);
    expect(Object.fromEntries([...again.projects].sort())).toEqual(Object.fromEntries([['__proto__', 'proto'], ['p9', 'nine']]));
    expect(again.workspaces.size).toBe(0);
  });

  // G (u-g) > G1 > G2; P-own (u-p), P-g1 in G1, P-g2 in G2, P-x in X, P-none in no group; W2 mirrors it.
  const tree = (over: Partial<Record<string, string[]>> = {}): DomainDirectory => ({
    groups: [
      { project_group_id: 'G', workspace_id: 'w1', parent_group_id: '', users: over.G ?? ['u-g'] },
      { project_group_id: 'G1', workspace_id: 'w1', parent_group_id: 'G', users: over.G1 ?? [] },
      { project_group_id: 'G2', workspace_id: 'w1', parent_group_id: 'G1', users: over.G2 ?? [] },
      { project_group_id: 'X', workspace_id: 'w1', parent_group_id: '', users: over.X ?? [] },
      { project_group_id: 'W2G', workspace_id: 'w2', parent_group_id: '', users: ['u-g'] },
    ],
    projects: [
      { project_id: 'P-own', workspace_id: 'w1', project_group_id: 'X', name: 'own', users: over['P-own'] ?? ['u-p'] },
      { project_id: 'P-g1', workspace_id: 'w1', project_group_id: 'G1', name: 'g1', users: [] },
      { project_id: 'P-g2', workspace_id: 'w1', project_group_id: 'G2', name: 'g2', users: [] },
      { project_id: 'P-x', workspace_id: 'w1', project_group_id: 'X', name: 'x', users: [] },
      { project_id: 'P-none', workspace_id: 'w1', project_group_id: '', name: 'none', users: [] },
      { project_id: 'P-w2', workspace_id: 'w2', project_group_id: 'W2G', name: 'w2', users: ['u-p'] },
    ],
  });
  const sorted = (s: ReadonlySet<string>) => [...s].sort();

  it("answers a member's projects: their own, and every project under a group of theirs at any depth, in one workspace", async () => {
    const pub = new DirectoryPublisher(r.redis, r.prefix);
    const client = new DirectoryClient(r.redis, r.prefix);
    await pub.publish('dm', tree());
    expect(sorted(await client.memberProjects('dm', 'w1', 'u-g'))).toEqual(['P-g1', 'P-g2']);
    expect(sorted(await client.memberProjects('dm', 'w1', 'u-p'))).toEqual(['P-own']);
    expect(sorted(await client.memberProjects('dm', 'w2', 'u-p'))).toEqual(['P-w2']);
    expect(sorted(await client.memberProjects('dm', 'w1', 'nobody'))).toEqual([]);
    expect(sorted(await client.memberProjects('other', 'w1', 'u-g'))).toEqual([]);
    // Membership of a middle group reaches only its own subtree.
    await pub.publish('dm', tree({ G: [], G1: ['u-m'] }));
    expect(sorted(await client.memberProjects('dm', 'w1', 'u-m'))).toEqual(['P-g1', 'P-g2']);
    expect(sorted(await client.memberProjects('dm', 'w1', 'u-g'))).toEqual([]);
    await pub.publish('dm', tree({ G: [], G2: ['u-m'] }));
    expect(sorted(await client.memberProjects('dm', 'w1', 'u-m'))).toEqual(['P-g2']);
  });

  it('shows a PUBLIC project to every member of its workspace, and to no one elsewhere', async () => {
    const pub = new DirectoryPublisher(r.redis, r.prefix);
    const client = new DirectoryClient(r.redis, r.prefix);
    const t = tree();
    t.projects.push({ project_id: 'P-pub', workspace_id: 'w1', project_group_id: '', name: 'pub', users: [], project_type: 'PUBLIC' });
    await pub.publish('dpub', t);
    expect(sorted(await client.memberProjects('dpub', 'w1', 'nobody'))).toEqual(['P-pub']);
    expect(sorted(await client.memberProjects('dpub', 'w1', 'u-p'))).toEqual(['P-own', 'P-pub']);
    expect(sorted(await client.memberProjects('dpub', 'w2', 'nobody'))).toEqual([]);
    // An entry of layout 2 (no type) is PRIVATE.
    await r.redis.hset(`${r.prefix}dir:{dpub}`, 'p:P-pub', JSON.stringify(['w1', '', 'pub', []]));
    await r.redis.incr(`${r.prefix}dir:{dpub}:v`);
    expect(sorted(await client.memberProjects('dpub', 'w1', 'nobody'))).toEqual([]);
  });

  it('re-reads only when a new version is published, and then sees a removal and a group move', async () => {
    const pub = new DirectoryPublisher(r.redis, r.prefix);
    const client = new DirectoryClient(r.redis, r.prefix);
    await pub.publish('dv', tree());
    expect(sorted(await client.memberProjects('dv', 'w1', 'u-p'))).toEqual(['P-own']);
    // The hash changed behind the version counter's back: the cached answer stands.
    await r.redis.hset(`${r.prefix}dir:{dv}`, 'p:P-own', JSON.stringify(['w1', 'X', 'own', []]));
    expect(sorted(await client.memberProjects('dv', 'w1', 'u-p'))).toEqual(['P-own']);
    // A publish (new version) with the user removed takes effect on the next read.
    await pub.publish('dv', tree({ 'P-own': [] }));
    expect(sorted(await client.memberProjects('dv', 'w1', 'u-p'))).toEqual([]);
    // Moving X under G puts P-own and P-x under u-g.
    const moved = tree();
    moved.groups = moved.groups.map((g) => (g.project_group_id === 'X' ? { ...g, parent_group_id: 'G' } : g));
    await pub.publish('dv', moved);
    expect(sorted(await client.memberProjects('dv', 'w1', 'u-g'))).toEqual(['P-g1', 'P-g2', 'P-own', 'P-x']);
  });

  it('reads an entry of layout 1 (no users) as a directory without members, and layout 1 readers read layout 2', async () => {
    const client = new DirectoryClient(r.redis, r.prefix);
    await r.redis.hset(`${r.prefix}dir:{old}`, '_', '1', 'p:p1', JSON.stringify(['w1', 'G', 'one']), 'g:G', JSON.stringify(['w1', '']));
    await r.redis.incr(`${r.prefix}dir:{old}:v`);
    expect(await client.getProject('old', 'p1')).toEqual({ project_id: 'p1', workspace_id: 'w1', project_group_id: 'G', name: 'one', users: [], project_type: 'PRIVATE' });
    expect(await client.getGroup('old', 'G')).toEqual({ project_group_id: 'G', workspace_id: 'w1', parent_group_id: '', users: [] });
    expect(sorted(await client.memberProjects('old', 'w1', 'u'))).toEqual([]);

    await new DirectoryPublisher(r.redis, r.prefix).publish('new', tree());
    const raw = await r.redis.hgetall(`${r.prefix}dir:{new}`);
    expect(raw._).toBe('3');
    // What a layout-1 reader destructures is where it was.
    const [ws, group, name] = JSON.parse(raw['p:P-own']) as string[];
    expect([ws, group, name]).toEqual(['w1', 'X', 'own']);
    const [gws, parent] = JSON.parse(raw['g:G1']) as string[];
    expect([gws, parent]).toEqual(['w1', 'G']);
  });

  describe('projectScope', () => {
    const auth = (roleType: AuthContext['roleType'], userId: string): AuthContext => ({
      userId,
      domainId: 'ds',
      workspaceId: 'w1',
      roleType,
      roleId: '',
      scope: roleType === 'DOMAIN_ADMIN' ? 'DOMAIN' : 'WORKSPACE',
      permissions: ['*'],
      userType: 'USER',
    });
    const code = (fn: () => void) => {
      try {
        fn();
        return 'ok';
      } catch (err) {
        return isApiError(err) ? `${err.status} ${err.code}` : String(err);
      }
    };

    it('restricts a workspace member to their projects and nobody else', async () => {
      await new DirectoryPublisher(r.redis, r.prefix).publish('ds', tree());
      const client = new DirectoryClient(r.redis, r.prefix);
      const member = await projectScope(client, auth('WORKSPACE_MEMBER', 'u-g'));
      expect(member.restricted).toBe(true);
      expect(member.conditions()).toEqual([{ key: 'project_id', value: ['P-g1', 'P-g2'], operator: 'in' }]);
      expect(member.allows('P-g2')).toBe(true);
      expect(member.allows('P-x')).toBe(false);
      expect(member.allows('')).toBe(false);
      expect(code(() => member.check('P-g1'))).toBe('ok');
      expect(code(() => member.check(undefined))).toBe('ok');
      expect(code(() => member.check('P-x'))).toBe('403 ERROR_PERMISSION_DENIED');
      expect(code(() => member.requireWrite(''))).toBe('400 ERROR_REQUIRED_PARAMETER');
      expect(code(() => member.requireWrite('P-x'))).toBe('403 ERROR_PERMISSION_DENIED');

      const lonely = await projectScope(client, auth('WORKSPACE_MEMBER', 'nobody'));
      expect(lonely.conditions()).toEqual([{ key: 'project_id', value: [], operator: 'in' }]);

      for (const role of ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const) {
        const s = await projectScope(client, auth(role, 'u-g'));
        expect(s).toBe(ProjectScope.ALL);
        expect(s.conditions()).toEqual([]);
        expect(s.allows('P-x')).toBe(true);
        expect(s.allows('')).toBe(true);
        expect(code(() => s.requireWrite(undefined))).toBe('ok');
      }
    });
  });
});
