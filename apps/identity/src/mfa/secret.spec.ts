import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { isSealedText, keyId } from '@platform/secrets';
import { AdminService } from '../admin/service';
import { createTestIdentity } from '../test-support';
import { currentCounter, generateTotpSecret, totpAt } from './totp';
import { sealMfaSecrets } from './secret';

/**
 * user.mfa_secret at rest: sealed by `user mfa-enable`, opened only to check a verify_code; plain rows
 * from before sealing keep working and the backfill seals them.
 */
const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('MFA secrets at rest', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  /** Every answer of the API in this file (and the claims of every token): none may carry a secret. */
  const answers: string[] = [];

  beforeAll(async () => {
    t = await createTestIdentity({ secretKeys: [k1] });
    await t.admin.createDomain({ domainId: 'd1', name: 'd1' });
    for (const u of ['sealed', 'legacy', 'rotated', 'rotated-2', 'owner-of-secret', 'copy-target', 'no-mfa']) {
      await t.admin.createUser({ domainId: 'd1', userId: u, password: 'password-1' });
    }
  });
  afterAll(() => t?.close());

  const admin = () => new AdminService(t.deps, t.effects, t.deps.config.secretKeys);
  const issue = async (body: object) => {
    const res = await request(t.app).post('/identity/v2/token/issue').send(body);
    answers.push(res.text);
    for (const k of ['access_token', 'refresh_token']) if (res.body?.[k]) answers.push(JSON.stringify(decodeJwt(res.body[k])));
    return res;
  };
  /** Password, then the TOTP code of `secret`: the second step's answer. */
  const mfaLogin = async (userId: string, secret: string, counter = currentCounter()) => {
    const first = await issue({ credentials: { user_id: userId, password: 'password-1' }, domain_id: 'd1' });
    expect(first.body.error?.code).toBe('ERROR_MFA_REQUIRED');
    return issue({ credentials: { user_id: userId }, domain_id: 'd1', auth_type: 'MFA', verify_code: totpAt(secret, counter) });
  };
  const stored = async (userId: string): Promise<string> =>
    (await t.deps.pool.query(`SELECT mfa_secret FROM "user" WHERE domain_id = 'd1' AND user_id = $1`, [userId])).rows[0].mfa_secret;
  const secrets: string[] = [];

  it('stores the secret sealed at mfa-enable, and MFA login works with it', async () => {
    const { secret } = await admin().enableMfa({ domainId: 'd1', userId: 'sealed' });
    secrets.push(secret);
    const row = await stored('sealed');
    expect(isSealedText(row)).toBe(true);
    expect(row).not.toContain(secret);
    expect(row.split(':')[2]).toBe(keyId(k1));

    const res = await mfaLogin('sealed', secret);
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeDefined();
    const wrong = await issue({ credentials: { user_id: 'sealed', password: 'password-1' }, domain_id: 'd1', auth_type: 'MFA', verify_code: totpAt(secret, currentCounter() + 5) });
    expect(wrong.body.error.code).toBe('ERROR_INVALID_CREDENTIALS');
  });

  it('reads a plain secret written the old way, and the backfill seals it once', async () => {
    const secret = generateTotpSecret();
    secrets.push(secret);
    await t.deps.pool.query(`UPDATE "user" SET mfa_enabled = true, mfa_secret = $1 WHERE domain_id = 'd1' AND user_id = 'legacy'`, [secret]);
    expect((await mfaLogin('legacy', secret)).status).toBe(200);

    expect(await sealMfaSecrets(t.deps.pool, t.deps.config.secretKeys)).toEqual({ sealed: 1, resealed: 0, unreadable: 0 });
    const row = await stored('legacy');
    expect(isSealedText(row)).toBe(true);
    expect(row).not.toContain(secret);
    expect(await stored('no-mfa')).toBeNull();
    expect(await sealMfaSecrets(t.deps.pool, t.deps.config.secretKeys)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 });
    expect((await mfaLogin('legacy', secret, currentCounter() + 1)).status).toBe(200);
  });

  it('opens a secret sealed under a previous key after rotation, and the backfill moves it to the new key', async () => {
    const { secret } = await admin().enableMfa({ domainId: 'd1', userId: 'rotated' });
    const second = await admin().enableMfa({ domainId: 'd1', userId: 'rotated-2' });
    secrets.push(secret, second.secret);
    t.deps.config.secretKeys = [k2, k1];
    expect((await mfaLogin('rotated', secret)).status).toBe(200);
    const again = await admin().enableMfa({ domainId: 'd1', userId: 'rotated' });
    secrets.push(again.secret);
    expect((await stored('rotated')).split(':')[2]).toBe(keyId(k2));

    // The old key dropped while a secret still needs it: a clear server-side error, never a login.
    const legacySecret = secrets[1];
    t.deps.config.secretKeys = [k2];
    const res = await mfaLogin('legacy', legacySecret, currentCounter() - 1);
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'ERROR_SECRET_KEY_UNAVAILABLE', status: 500 });

    // `secrets seal` seals again with the new key what the old one sealed; then the old key can go.
    t.deps.config.secretKeys = [k2, k1];
    expect(await sealMfaSecrets(t.deps.pool, t.deps.config.secretKeys)).toEqual({ sealed: 0, resealed: 3, unreadable: 0 });
    expect((await stored('rotated-2')).split(':')[2]).toBe(keyId(k2));
    t.deps.config.secretKeys = [k2];
    expect((await mfaLogin('rotated-2', second.secret)).status).toBe(200);
  });

  it("does not open a sealed secret copied into another user's row", async () => {
    const { secret } = await admin().enableMfa({ domainId: 'd1', userId: 'owner-of-secret' });
    secrets.push(secret);
    await admin().enableMfa({ domainId: 'd1', userId: 'copy-target' });
    await t.deps.pool.query(`UPDATE "user" SET mfa_secret = (SELECT mfa_secret FROM "user" WHERE user_id = 'owner-of-secret') WHERE user_id = 'copy-target'`);
    const res = await mfaLogin('copy-target', secret);
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'ERROR_SECRET_UNREADABLE', status: 500 });
    expect(res.body.refresh_token).toBeUndefined();
  });

  it('never answers an MFA secret, plain or sealed', async () => {
    const { rows } = await t.deps.pool.query(`SELECT mfa_secret FROM "user" WHERE mfa_secret IS NOT NULL`);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(secrets.length).toBeGreaterThanOrEqual(5);
    expect(answers.length).toBeGreaterThan(15);
    for (const a of answers) {
      for (const s of secrets) expect(a).not.toContain(s);
      for (const r of rows) expect(a).not.toContain(r.mfa_secret.split(':')[4]);
    }
  });
});
