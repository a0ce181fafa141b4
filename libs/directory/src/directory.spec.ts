import { createTestRedis } from '@platform/testing';
import { DirectoryClient, DirectoryPublisher } from './index';

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
    expect(await client.getProject('d1', 'p2')).toEqual({ project_id: 'p2', workspace_id: 'w1', project_group_id: 'pg-c', name: 'two' });
    expect(await client.getProject('d2', 'p2')).toBeUndefined();
    expect((await client.projectsInGroup('d1', 'pg-a')).sort()).toEqual(['p1', 'p2']);
    expect(await client.projectsInGroup('d1', 'pg-b')).toEqual(['p2']);
    expect(await client.projectsInGroup('d1', 'pg-none')).toEqual([]);

    // A new version is picked up; the old state is gone.
    await pub.publish('d1', { groups: [], projects: [{ project_id: 'p9', workspace_id: 'w2', project_group_id: '', name: 'nine' }] });
    expect(await client.getProject('d1', 'p2')).toBeUndefined();
    expect((await client.getProject('d1', 'p9'))?.workspace_id).toBe('w2');
  });
});
