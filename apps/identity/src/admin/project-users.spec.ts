import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import request from 'supertest';
import { DirectoryClient } from '@platform/directory';
import { bearer } from '@platform/testing';
import { isApiError } from '@platform/errors';
import { createTestIdentity, seedDomain } from '../test-support';

const ROOT = path.resolve(__dirname, '../../../..');

describe('identity project users and the directory of member projects', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let owner: string;
  let client: DirectoryClient;
  const visible = async (user: string, ws = 'ws-1') => [...(await client.memberProjects('d1', ws, user))].sort();
  const code = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (err) => (isApiError(err) ? `${err.status} ${err.code}` : String(err)),
    );
  const group = async (name: string, parent?: string) => {
    const res = await request(t.app)
      .post('/identity/v2/project-group/create')
      .set('Authorization', owner)
      .send({ name, ...(parent && { parent_group_id: parent }) });
    expect(res.status).toBe(200);
    return res.body.project_group_id as string;
  };
  const groupCall = (verb: string, body: object) => request(t.app).post(`/identity/v2/project-group/${verb}`).set('Authorization', owner).send(body);

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await t.admin.createUser({ domainId: 'd1', userId: 'ws2-member', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-2' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    client = new DirectoryClient(t.deps.redis, t.deps.redisPrefix);
  });
  afterAll(() => t.close());

  it('adds and removes project users with set semantics, users of the workspace only', async () => {
    const created = await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-users', name: 'users' });
    expect(created.users).toEqual([]);
    let p = await t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['member', 'owner', 'member'] });
    expect(p).toMatchObject({ project_id: 'p-users', workspace_id: 'ws-1', users: ['member', 'owner'] });
    p = await t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['member', 'admin'] });
    expect(p.users).toEqual(['admin', 'member', 'owner']); // a domain admin belongs to every workspace
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['loner'] }))).toBe('404 ERROR_NOT_FOUND');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['ws2-member'] }))).toBe('404 ERROR_NOT_FOUND');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['ghost'] }))).toBe('404 ERROR_NOT_FOUND');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: [] }))).toBe('400 ERROR_REQUIRED_PARAMETER');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['bad id!'] }))).toBe('400 ERROR_INVALID_PARAMETER');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-nope', users: ['member'] }))).toBe('404 ERROR_NOT_FOUND');
    expect(await code(t.admin.addProjectUsers({ domainId: 'd-nope', projectId: 'p-users', users: ['member'] }))).toBe('404 ERROR_NOT_FOUND');
    p = await t.admin.removeProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['owner', 'nobody'] });
    expect(p.users).toEqual(['admin', 'member']);
    expect(await visible('member')).toContain('p-users');
    p = await t.admin.removeProjectUsers({ domainId: 'd1', projectId: 'p-users', users: ['member'] });
    expect(await visible('member')).not.toContain('p-users');
  });

  it('never loses a concurrent addition', async () => {
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-race', name: 'race' });
    await Promise.all([
      t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-race', users: ['member'] }),
      t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-race', users: ['member2'] }),
      t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-race', users: ['owner'] }),
    ]);
    const row = await t.prisma.project.findUnique({ where: { domain_id_project_id: { domain_id: 'd1', project_id: 'p-race' } } });
    expect(row?.users).toEqual(['member', 'member2', 'owner']);
    expect(await visible('member2')).toContain('p-race');
  });

  it('publishes group membership down the tree; a group move, a new project and a removal reach the directory at once', async () => {
    const top = await group('m-top');
    const mid = await group('m-mid', top);
    const leaf = await group('m-leaf', mid);
    const aside = await group('m-aside');
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-leaf', name: 'leaf', projectGroupId: leaf });
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-aside', name: 'aside', projectGroupId: aside });
    expect(await visible('member2')).not.toContain('p-leaf');

    // Membership of the top group reaches a project two levels below.
    expect((await groupCall('add-users', { project_group_id: top, users: ['member2'] })).status).toBe(200);
    expect(await visible('member2')).toEqual(expect.arrayContaining(['p-leaf']));
    expect(await visible('member2')).not.toContain('p-aside');

    // A new project in the member's subtree is theirs at once.
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-new', name: 'new', projectGroupId: mid });
    expect(await visible('member2')).toContain('p-new');

    // Moving the aside group under the top group brings its projects in.
    expect((await groupCall('change-parent-group', { project_group_id: aside, parent_group_id: top })).status).toBe(200);
    expect(await visible('member2')).toContain('p-aside');

    // Removing the member from the group takes everything away on the next read.
    expect((await groupCall('remove-users', { project_group_id: top, users: ['member2'] })).status).toBe(200);
    const after = await visible('member2');
    for (const p of ['p-leaf', 'p-new', 'p-aside']) expect(after).not.toContain(p);
    // Another workspace's member sees nothing of ws-1.
    expect(await visible('ws2-member', 'ws-2')).toEqual([]);
  });

  describe('admin CLI', () => {
    let dir: string;
    let cli: string;
    beforeAll(async () => {
      // Inside the repository (tmp/ is ignored), so the bundle resolves node_modules as dist/ does.
      mkdirSync(path.join(ROOT, 'tmp'), { recursive: true });
      dir = mkdtempSync(path.join(ROOT, 'tmp', 'identity-admin-'));
      cli = path.join(dir, 'admin.js');
      await build({
        entryPoints: [path.join(ROOT, 'apps/identity/src/admin/cli.ts')],
        outfile: cli,
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        packages: 'external',
        tsconfig: path.join(ROOT, 'tsconfig.base.json'),
        logLevel: 'error',
        plugins: [
          {
            name: 'platform-libs',
            setup(b) {
              b.onResolve({ filter: /^@platform\// }, (args) => ({ path: path.join(ROOT, 'libs', args.path.slice('@platform/'.length), 'src/index.ts') }));
            },
          },
        ],
      });
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const runWith = (env: Record<string, string>, ...args: string[]) => {
      const r = spawnSync(process.execPath, [cli, ...args], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: t.databaseUrl, REDIS_URL: t.redisUrl, DIRECTORY_PREFIX: t.deps.redisPrefix, ...env },
        encoding: 'utf8',
      });
      return { status: r.status, out: r.stdout, err: r.stderr };
    };
    const run = (...args: string[]) => runWith({}, ...args);

    it('adds and removes project users and republishes before it answers', async () => {
      await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-cli', name: 'cli' });
      let r = run('project', 'add-users', '--domain-id', 'd1', '--project-id', 'p-cli', '--users', 'member, member2');
      expect(r.err).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ project_id: 'p-cli', users: ['member', 'member2'] });
      expect(await visible('member')).toContain('p-cli');

      r = run('project', 'remove-users', '--domain-id', 'd1', '--project-id', 'p-cli', '--users', 'member');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.out).users).toEqual(['member2']);
      expect(await visible('member')).not.toContain('p-cli');
      expect(await visible('member2')).toContain('p-cli');
    });

    it('connects to Redis only for a command that publishes or revokes (domain create needs none)', () => {
      // Nothing listens on port 1: a command that touched Redis would log its failure or fail.
      const r = runWith({ REDIS_URL: 'redis://127.0.0.1:1' }, 'domain', 'create', '--domain-id', 'd-cli', '--name', 'cli');
      expect(r.err).toBe('');
      expect(r.status).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ domain_id: 'd-cli', state: 'ENABLED' });
    });

    it('answers bad input with a 4xx-style error and a non-zero exit', () => {
      let r = run('project', 'add-users', '--domain-id', 'd1', '--project-id', 'p-cli', '--users', 'loner');
      expect(r.status).toBe(1);
      expect(r.err).toContain('404 ERROR_NOT_FOUND');
      expect(r.err).toContain('loner');
      r = run('project', 'add-users', '--domain-id', 'd1', '--project-id', 'p-missing', '--users', 'member');
      expect(r.status).toBe(1);
      expect(r.err).toContain('404 ERROR_NOT_FOUND');
      expect(r.err).toContain('p-missing');
      r = run('project', 'add-users', '--domain-id', 'd1', '--project-id', 'p-cli', '--users', ' , ');
      expect(r.status).toBe(1);
      expect(r.err).toContain('400 ERROR_REQUIRED_PARAMETER');
      r = run('project', 'remove-users', '--domain-id', 'd1', '--project-id', 'p-cli');
      expect(r.status).toBe(1);
      expect(r.err).toContain('--users is required');
    });
  });
});
