import request from 'supertest';
import { createTestIdentity, seedDomain } from '../test-support';

// Callers are told apart by X-Forwarded-For: supertest connects from loopback, a trusted proxy by default.
describe('identity token/issue rate limits', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  beforeAll(async () => {
    t = await createTestIdentity({ issueRateLimit: { perAddress: { points: 4, seconds: 60 }, perUser: { points: 6, seconds: 60 } } });
    await seedDomain(t.admin, 'd1');
  });
  afterAll(() => t.close());

  const issue = (from: string, user: string, password = 'password-1') =>
    request(t.app).post('/identity/v2/token/issue').set('X-Forwarded-For', from).send({ credentials: { user_id: user, password }, domain_id: 'd1' });
  const expectTooMany = (res: request.Response) => {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: { code: 'ERROR_TOO_MANY_REQUESTS', status: 429, message: expect.stringMatching(/^Too many requests; retry in \d+ seconds\.$/) } });
    const seconds = Number(/retry in (\d+) seconds/.exec(res.body.error.message)![1]);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(res.headers['retry-after']).toBe(String(seconds));
  };

  it('answers 429 to an address past its limit while another address still gets through', async () => {
    const users = ['admin', 'owner', 'member', 'loner'];
    // Failures count as well as successes.
    for (const [i, user] of users.entries()) expect((await issue('203.0.113.10', user, i === 0 ? 'wrong-password-x' : 'password-1')).status).toBe(i === 0 ? 401 : 200);
    const refused = await issue('203.0.113.10', 'member2');
    expectTooMany(refused);
    expect(JSON.stringify(refused.headers) + refused.text).not.toContain('password-1');
    // The right password from the limited address is refused too; another address is served.
    expectTooMany(await issue('203.0.113.10', 'admin'));
    expect((await issue('203.0.113.11', 'member2')).status).toBe(200);
  });

  it('limits one user across addresses, and no other user', async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'popular', password: 'password-1' });
    for (let i = 0; i < 6; i++) expect((await issue(`198.51.100.${i}`, 'popular')).status).toBe(200);
    const refused = await issue('198.51.100.200', 'popular');
    expectTooMany(refused);
    expect(JSON.stringify(refused.headers) + refused.text).not.toContain('password-1');
    // An unknown user is limited the same way: nothing tells it apart.
    for (let i = 0; i < 6; i++) expect((await issue(`198.51.100.${20 + i}`, 'nobody', 'wrong-password-y')).status).toBe(401);
    expectTooMany(await issue('198.51.100.201', 'nobody', 'wrong-password-y'));
    expect((await issue('198.51.100.200', 'owner')).status).toBe(200);
  });

});
