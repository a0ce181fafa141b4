import Redis from 'ioredis';
import request from 'supertest';
import { verify as argon2Verify } from '@node-rs/argon2';
import { TEST_REDIS_URL } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';
import { createApp } from '../app';
import { AttemptCounter } from './attempts';
import { currentCounter, totpAt, verifyTotp } from '../mfa/totp';

// The real argon2 and TOTP checks, wrapped so the tests can count how many checks ran.
jest.mock('@node-rs/argon2', () => {
  const actual = jest.requireActual('@node-rs/argon2');
  return { ...actual, verify: jest.fn((...args: Parameters<typeof actual.verify>) => actual.verify(...args)) };
});
jest.mock('../mfa/totp', () => {
  const actual = jest.requireActual('../mfa/totp');
  return { ...actual, verifyTotp: jest.fn((...args: Parameters<typeof actual.verifyTotp>) => actual.verifyTotp(...args)) };
});
const passwordChecks = argon2Verify as unknown as jest.Mock;
const totpChecks = verifyTotp as unknown as jest.Mock;

const BURST = 40;
const LIMIT = 5;
const WRONG = 'wrong-password-7f3a';

describe('identity login under a parallel burst', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  beforeAll(async () => {
    // Rate limits out of the way: these tests are about the lockout alone.
    const generous = { points: 10_000, seconds: 60 };
    t = await createTestIdentity({ issueRateLimit: { perAddress: generous, perUser: generous } });
    await seedDomain(t.admin, 'd1');
  });
  beforeEach(() => {
    t.deps.config.login.maxFailures = LIMIT;
    t.deps.config.login.mfaMaxFailures = 3;
    passwordChecks.mockClear();
    totpChecks.mockClear();
  });
  afterAll(() => t.close());

  const issue = (body: object) => request(t.app).post('/identity/v2/token/issue').send(body);
  const burst = (bodies: object[]) => Promise.all(bodies.map((b) => issue(b)));
  const codes = (answers: request.Response[]) => answers.map((r) => `${r.status} ${r.body.error?.code}`).sort();
  const expectNoSecret = (answers: request.Response[], secret: string) => {
    for (const r of answers) expect(JSON.stringify(r.headers) + r.text).not.toContain(secret);
  };

  it(`checks at most the limit of passwords in a burst of ${BURST}, then refuses the right one unchecked`, async () => {
    const answers = await burst(Array.from({ length: BURST }, () => ({ credentials: { user_id: 'member', password: WRONG }, domain_id: 'd1' })));
    expect(passwordChecks).toHaveBeenCalledTimes(LIMIT);
    expect(codes(answers)).toEqual([
      ...Array(LIMIT).fill('401 ERROR_AUTHENTICATE_FAILURE'),
      ...Array(BURST - LIMIT).fill('401 ERROR_LOGIN_BLOCKED'),
    ]);
    expectNoSecret(answers, WRONG);

    const right = await issue({ credentials: { user_id: 'member', password: 'password-1' }, domain_id: 'd1' });
    expect(right.status).toBe(401);
    expect(right.body.error.code).toBe('ERROR_LOGIN_BLOCKED');
    expect(passwordChecks).toHaveBeenCalledTimes(LIMIT);
    expectNoSecret([right], 'password-1');
    // Other users are not affected.
    expect((await issue({ credentials: { user_id: 'owner', password: 'password-1' }, domain_id: 'd1' })).status).toBe(200);
  });

  it('answers a burst against an unknown user exactly as against a real one', async () => {
    const body = (user: string) => ({ credentials: { user_id: user, password: WRONG }, domain_id: 'd1' });
    const real = await burst(Array.from({ length: BURST }, () => body('loner')));
    const ghost = await burst(Array.from({ length: BURST }, () => body('no-such-user')));
    expect(passwordChecks).toHaveBeenCalledTimes(2 * LIMIT);
    const shapes = (answers: request.Response[]) => answers.map((r) => JSON.stringify([r.status, r.body])).sort();
    expect(shapes(ghost)).toEqual(shapes(real));
    expect(codes(ghost).filter((c) => c.endsWith('ERROR_LOGIN_BLOCKED'))).toHaveLength(BURST - LIMIT);
  });

  it(`checks at most the MFA limit of TOTP codes in a burst of ${BURST} after a valid password`, async () => {
    t.deps.config.login.maxFailures = 100; // only the TOTP count limits this burst
    await t.admin.createUser({ domainId: 'd1', userId: 'mfa-user', password: 'password-1' });
    const { secret } = await t.admin.enableMfa({ domainId: 'd1', userId: 'mfa-user' });
    const first = await issue({ credentials: { user_id: 'mfa-user', password: 'password-1' }, domain_id: 'd1' });
    expect(first.body.error.code).toBe('ERROR_MFA_REQUIRED');

    const c = currentCounter();
    const valid = new Set([-2, -1, 0, 1, 2].map((d) => totpAt(secret, c + d)));
    const wrong = Array.from({ length: BURST + 10 }, (_, i) => String(100_000 + i * 7919)).filter((code) => !valid.has(code)).slice(0, BURST);
    const answers = await burst(wrong.map((verify_code) => ({ credentials: { user_id: 'mfa-user' }, domain_id: 'd1', auth_type: 'MFA', verify_code })));
    expect(totpChecks).toHaveBeenCalledTimes(3);
    expect(codes(answers)).toEqual([...Array(3).fill('401 ERROR_INVALID_CREDENTIALS'), ...Array(BURST - 3).fill('401 ERROR_LOGIN_BLOCKED')]);

    // The right code, with or without the password again, is refused unchecked while blocked.
    const code = totpAt(secret, currentCounter());
    const withCode = await issue({ credentials: { user_id: 'mfa-user' }, domain_id: 'd1', auth_type: 'MFA', verify_code: code });
    expect(withCode.body.error.code).toBe('ERROR_LOGIN_BLOCKED');
    const withBoth = await issue({ credentials: { user_id: 'mfa-user', password: 'password-1' }, domain_id: 'd1', auth_type: 'MFA', verify_code: code });
    expect(withBoth.body.error.code).toBe('ERROR_LOGIN_BLOCKED');
    expect(totpChecks).toHaveBeenCalledTimes(3);
    expectNoSecret([...answers, withBoth], 'password-1');
  });

  it('fails closed: without Redis the login is 503 and no password is checked', async () => {
    // A client whose connection has gone, as while Redis is down (commands fail at once).
    const down = new Redis(TEST_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => null });
    down.on('error', () => {});
    await new Promise((resolve) => down.once('ready', resolve));
    await down.quit();
    for (const points of [10_000, 0]) {
      // With the rate limits on (they fail first) and off (the lockout fails).
      const limit = { points, seconds: 60 };
      const app = createApp({ ...t.deps, redis: down, config: { ...t.deps.config, issueRateLimit: { perAddress: limit, perUser: limit } } });
      const res = await request(app).post('/identity/v2/token/issue').send({ credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'd1' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
      expectNoSecret([res], 'password-1');
    }
    expect(passwordChecks).not.toHaveBeenCalled();
  });
});

describe('AttemptCounter', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let n = 0;
  beforeAll(async () => {
    t = await createTestIdentity();
  });
  afterAll(() => t.close());
  const counter = () => new AttemptCounter(t.deps.redis, () => ({ limit: 5, windowSeconds: 60 }));
  const key = () => `${t.deps.redisPrefix}attempts-${++n}`;
  const allowedOf = async (c: AttemptCounter, k: string, tries: number) => {
    let allowed = 0;
    for (let i = 0; i < tries; i++) if (await c.begin(k)) allowed++;
    return allowed;
  };

  it('does not let a success hand back the attempts still being checked', async () => {
    const c = counter();
    const k = key();
    for (let i = 0; i < 3; i++) expect(await c.begin(k)).toBe(true); // three checks in flight
    expect(await c.begin(k)).toBe(true);
    await c.succeed(k);
    expect(await allowedOf(c, k, 10)).toBe(2);
  });

  it('clears the failures that have ended on a success, as a login always did', async () => {
    const c = counter();
    const k = key();
    for (let i = 0; i < 4; i++) {
      expect(await c.begin(k)).toBe(true);
      await c.fail(k);
    }
    expect(await c.begin(k)).toBe(true);
    await c.succeed(k);
    expect(await t.deps.redis.exists(k)).toBe(0);
    expect(await allowedOf(c, k, 10)).toBe(5);
  });

  it('counts refused attempts as failures and a released attempt as nothing', async () => {
    const c = counter();
    const k = key();
    expect(await allowedOf(c, k, 7)).toBe(5);
    expect(Number(await t.deps.redis.hget(k, 'failures'))).toBe(2);
    const ttl = await t.deps.redis.ttl(k);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);

    const k2 = key();
    expect(await c.begin(k2)).toBe(true);
    await c.release(k2);
    expect(await t.deps.redis.exists(k2)).toBe(0);
  });
});
