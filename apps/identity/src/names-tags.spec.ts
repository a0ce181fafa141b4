import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestIdentity, seedDomain } from './test-support';

/** Issue #27 (LOW): names people read refuse control and bidi-override characters; tag values are bounded. */
describe('identity names and tags', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1']);
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    const post = (path: string, auth: string, body: object) => request(t.app).post(`/identity/v2/${path}`).set('Authorization', auth).send(body);
    ids.workspace_id = (await post('workspace/create', admin, { name: 'w' })).body.workspace_id;
    ids.project_id = (await post('project/create', owner, { name: 'p' })).body.project_id;
    ids.project_group_id = (await post('project-group/create', owner, { name: 'g' })).body.project_group_id;
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object) => request(t.app).post(`/identity/v2/${path}`).set('Authorization', auth).send(body);
  /** Every operation that sets a name, with the body around it. */
  const namers = (): [string, string, (name: string) => object][] => [
    ['workspace/create', admin, (name) => ({ name })],
    ['workspace/update', admin, (name) => ({ workspace_id: ids.workspace_id, name })],
    ['project/create', owner, (name) => ({ name })],
    ['project/update', owner, (name) => ({ project_id: ids.project_id, name })],
    ['project-group/create', owner, (name) => ({ name })],
    ['project-group/update', owner, (name) => ({ project_group_id: ids.project_group_id, name })],
    ['user/create', admin, (name) => ({ user_id: `u-${Math.random().toString(36).slice(2, 8)}`, auth_type: 'EXTERNAL', name })],
    ['user/update', admin, (name) => ({ user_id: 'member', name })],
  ];

  it.each(['evil\u202Etxt.exe', 'a\u2066b\u2069', 'x\u200Fy', 'bell\u0007', 'two\nlines', 'tab\there', 'c1\u0085', 'del\u007F', 'line\u2028sep'])(
    'refuses the name %j in every operation that sets one (400 naming `name`)',
    async (bad) => {
      for (const [path, auth, body] of namers()) {
        const res = await call(path, auth, body(bad));
        expect([path, res.status, res.body.error?.code]).toEqual([path, 400, 'ERROR_INVALID_PARAMETER']);
        expect(res.body.error.message).toContain('name');
      }
    },
  );

  it('accepts names in any script, with spaces and emoji', async () => {
    for (const [path, auth, body] of namers()) expect([path, (await call(path, auth, body('Équipe 東京 — ops 🚀 (α)'))).status]).toEqual([path, 200]);
  });

  it('bounds tags: a value at most 1 KiB, at most 200 of them, 32 KiB in all; the issue\'s 900 KB value is refused', async () => {
    const update = (tags: object) => call('workspace/update', admin, { workspace_id: ids.workspace_id, tags });
    const code = async (tags: object) => {
      const res = await update(tags);
      return `${res.status} ${res.body.error?.code ?? ''}`.trim();
    };
    expect(await code({ big: 'x'.repeat(900_000) })).toBe('400 ERROR_INVALID_PARAMETER');
    expect((await update({ big: 'x'.repeat(2000) })).body.error.message).toContain('tags.big');
    expect(await code({ ok: 'x'.repeat(1022) })).toBe('200'); // 1024 bytes as JSON, quotes included
    expect(await code({ over: 'x'.repeat(1023) })).toBe('400 ERROR_INVALID_PARAMETER');
    expect(await code({ nested: { a: ['y'.repeat(600), 'z'.repeat(600)] } })).toBe('400 ERROR_INVALID_PARAMETER');
    expect(await code(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'.repeat(1000)])))).toBe('400 ERROR_INVALID_PARAMETER');
    expect(await code(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, 'v'.repeat(1000)])))).toBe('200');
    expect(await code(Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, 'v'])))).toBe('400 ERROR_INVALID_PARAMETER');
    // Bytes, not characters: 400 three-byte characters are 1 202 bytes.
    expect(await code({ wide: '東'.repeat(400) })).toBe('400 ERROR_INVALID_PARAMETER');
  });
});
