import request from 'supertest';
import { isApiError } from '@platform/errors';
import { bearer } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

/** Issue #27 (LOW): ids that differ only in case are one id; a new case variant is refused, also when two creates race. */
describe('identity ids that differ only in case', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1']);
    await seedDomain(t.admin, 'd2');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(() => t.close());

  const create = (body: object) => request(t.app).post('/identity/v2/user/create').set('Authorization', admin).send(body);
  const code = (res: request.Response) => `${res.status} ${res.body.error?.code ?? ''}`.trim();
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'created',
      (e: unknown) => (isApiError(e) ? `${e.status} ${e.code}` : String(e)),
    );

  it('refuses a new user id equal to an existing one but for case, LOCAL or EXTERNAL; another domain is separate', async () => {
    for (const user_id of ['Admin', 'ADMIN', 'Owner']) expect(code(await create({ user_id, password: 'password-1-long' }))).toBe('409 ERROR_ALREADY_EXISTS');
    expect(code(await create({ user_id: 'mEmBeR', auth_type: 'EXTERNAL' }))).toBe('409 ERROR_ALREADY_EXISTS');
    expect(code(await create({ user_id: 'Alice@Example.com', auth_type: 'EXTERNAL' }))).toBe('200');
    expect(code(await create({ user_id: 'alice@example.com', auth_type: 'EXTERNAL' }))).toBe('409 ERROR_ALREADY_EXISTS');
    expect(await refusal(t.admin.createUser({ domainId: 'd2', userId: 'ALICE@example.com', password: 'password-1' }))).toBe('created');
    expect(await t.prisma.user.count({ where: { domain_id: 'd1', user_id: { in: ['Admin', 'ADMIN', 'Owner', 'mEmBeR', 'alice@example.com'] } } })).toBe(0);
  });

  it('of concurrent creates of case variants exactly one wins, the others are 409 (the unique index on lower(user_id))', async () => {
    const variants = ['racer', 'Racer', 'RACER', 'rAcer', 'raCer', 'racEr', 'raceR', 'RaCeR'];
    const answers = await Promise.all(variants.map((user_id) => create({ user_id, password: 'password-1-long' })));
    expect(answers.map(code).sort()).toEqual(['200', ...Array(7).fill('409 ERROR_ALREADY_EXISTS')]);
    expect(await t.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "user" WHERE domain_id = 'd1' AND lower(user_id) = 'racer'`)).toEqual([{ n: 1 }]);
    // The index holds even without the service's check.
    await expect(t.prisma.user.create({ data: { domain_id: 'd1', user_id: 'RACER', auth_type: 'EXTERNAL' } })).rejects.toMatchObject({ code: 'P2002' });
  });

  it('refuses case variants of the ids the admin CLI takes: domains, workspaces, projects', async () => {
    expect(await refusal(t.admin.createDomain({ domainId: 'D1', name: 'x' }))).toBe('409 ERROR_ALREADY_EXISTS');
    expect(await refusal(t.admin.createWorkspace({ domainId: 'd1', workspaceId: 'WS-1', name: 'x' }))).toBe('409 ERROR_ALREADY_EXISTS');
    expect(await refusal(t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'proj-a', name: 'a' }))).toBe('created');
    expect(await refusal(t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'Proj-A', name: 'a' }))).toBe('409 ERROR_ALREADY_EXISTS');
  });
});
