import { TokenVerifier } from '@platform/auth';
import { isApiError } from '@platform/errors';
import { createTestRedis, mintToken, testKeys, testSigner, waitFor } from '@platform/testing';
import { createPublicKey } from 'node:crypto';
import { AccessRevocations, RevocationPublisher, userField } from './revocations';

const until = (fn: () => boolean, ms = 2000) => waitFor(fn, ms, 'the condition', 5);

describe('access revocations', () => {
  const r = createTestRedis('revocations');
  const watchers: AccessRevocations[] = [];
  afterAll(async () => {
    for (const w of watchers) w.stop();
    await r.cleanup();
  });
  const watch = async () => {
    const w = new AccessRevocations(r.redis, { prefix: r.prefix });
    watchers.push(w);
    await w.start();
    return w;
  };
  const verifierWith = (w: AccessRevocations) => new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(w);
  const refused = (p: Promise<unknown>) =>
    p.then(
      () => false,
      (e) => isApiError(e) && e.code === 'ERROR_AUTHENTICATE_FAILURE',
    );

  it('refuses a user\'s tokens issued before the revocation, in another module, cached or not, and accepts later ones', async () => {
    const other = await watch(); // another module's process
    const verifier = verifierWith(other);
    const before = await mintToken({ domainId: 'd1', userId: 'alice', workspaceId: 'w1' });
    const bystander = await mintToken({ domainId: 'd1', userId: 'bob', workspaceId: 'w1' });
    const elsewhere = await mintToken({ domainId: 'd2', userId: 'alice', workspaceId: 'w1' });
    await verifier.authenticate(before); // now cached
    await new RevocationPublisher(r.redis, r.prefix).revokeUser('d1', 'alice');
    await until(() => other.revoked({ domainId: 'd1', userId: 'alice', workspaceId: '', issuedAtMs: 0 }));
    expect(await refused(verifier.authenticate(before))).toBe(true);
    expect(await refused(verifier.authenticate(bystander))).toBe(false);
    expect(await refused(verifier.authenticate(elsewhere))).toBe(false);
    // A token issued right after (same second) works: the check is to the millisecond.
    await new Promise((res) => setTimeout(res, 2));
    expect(await refused(verifier.authenticate(await mintToken({ domainId: 'd1', userId: 'alice', workspaceId: 'w1' })))).toBe(false);
  });

  it('refuses tokens scoped to a revoked workspace only', async () => {
    const w = await watch();
    const verifier = verifierWith(w);
    const inW2 = await mintToken({ domainId: 'd1', userId: 'carol', workspaceId: 'w2' });
    const inW3 = await mintToken({ domainId: 'd1', userId: 'carol', workspaceId: 'w3' });
    const userScope = await mintToken({ domainId: 'd1', userId: 'carol', roleType: 'USER' });
    await new RevocationPublisher(r.redis, r.prefix).revokeWorkspace('d1', 'w2');
    await until(() => w.revoked({ domainId: 'd1', userId: 'x', workspaceId: 'w2', issuedAtMs: 0 }));
    expect(await refused(verifier.authenticate(inW2))).toBe(true);
    expect(await refused(verifier.authenticate(inW3))).toBe(false);
    expect(await refused(verifier.authenticate(userScope))).toBe(false);
  });

  it('a binding\'s revocation refuses that user\'s tokens in that workspace only, at or before T to the millisecond', async () => {
    const w = await watch();
    const verifier = verifierWith(w);
    const at = Date.now() - 5000;
    const claims = { token_type: 'ACCESS_TOKEN' as const, user_id: 'hal', domain_id: 'd1', role_type: 'WORKSPACE_OWNER' as const, role_id: 'r', scope: 'WORKSPACE' as const, permissions: ['*'], user_type: 'USER' as const };
    const sign = (workspace_id: string, issuedAtMs: number, user_id = 'hal') => testSigner.sign({ ...claims, workspace_id, user_id }, 600, issuedAtMs);
    const atT = await sign('w5', at); // read the old state in the very millisecond of T
    const afterT = await sign('w5', at + 1);
    const otherWorkspace = await sign('w6', at);
    const otherUser = await sign('w5', at, 'ivy');
    await new RevocationPublisher(r.redis, r.prefix).revokeUserInWorkspace('d1', 'hal', 'w5', at);
    await until(() => w.revoked({ domainId: 'd1', userId: 'hal', workspaceId: 'w5', issuedAtMs: 0 }));
    expect(await refused(verifier.authenticate(atT))).toBe(true);
    expect(await refused(verifier.authenticate(afterT))).toBe(false);
    expect(await refused(verifier.authenticate(otherWorkspace))).toBe(false);
    expect(await refused(verifier.authenticate(otherUser))).toBe(false);
    expect(w.revoked({ domainId: 'd1', userId: 'hal', workspaceId: '', issuedAtMs: 0 })).toBe(false);
  });

  it('a role\'s revocation refuses every token granted with that role, at or before T, whoever holds it', async () => {
    const w = await watch();
    const verifier = verifierWith(w);
    const at = Date.now() - 5000;
    const claims = { token_type: 'ACCESS_TOKEN' as const, domain_id: 'd1', role_type: 'WORKSPACE_MEMBER' as const, scope: 'WORKSPACE' as const, workspace_id: 'w1', permissions: ['inventory:'], user_type: 'USER' as const };
    const sign = (user_id: string, role_id: string, issuedAtMs: number, domain_id = 'd1') => testSigner.sign({ ...claims, user_id, role_id, domain_id }, 600, issuedAtMs);
    const jon = await sign('jon', 'role-custom1', at);
    const kim = await sign('kim', 'role-custom1', at - 1000);
    const later = await sign('jon', 'role-custom1', at + 1);
    const otherRole = await sign('jon', 'role-custom2', at);
    const otherDomain = await sign('jon', 'role-custom1', at, 'd2');
    await new RevocationPublisher(r.redis, r.prefix).revokeRole('d1', 'role-custom1', at);
    await until(() => w.revoked({ domainId: 'd1', userId: 'x', workspaceId: '', roleId: 'role-custom1', issuedAtMs: 0 }));
    expect(await refused(verifier.authenticate(jon))).toBe(true);
    expect(await refused(verifier.authenticate(kim))).toBe(true);
    expect(await refused(verifier.authenticate(later))).toBe(false);
    expect(await refused(verifier.authenticate(otherRole))).toBe(false);
    expect(await refused(verifier.authenticate(otherDomain))).toBe(false);
  });

  it('a module that starts (or reconnects) later loads what was revoked before', async () => {
    await new RevocationPublisher(r.redis, r.prefix).revokeUser('d9', 'dave');
    const late = await watch();
    expect(late.revoked({ domainId: 'd9', userId: 'dave', workspaceId: '', issuedAtMs: Date.now() - 60_000 })).toBe(true);
    expect(late.revoked({ domainId: 'd9', userId: 'dave', workspaceId: '', issuedAtMs: Date.now() + 1 })).toBe(false);
  });

  it('prunes entries older than the longest token lifetime, and ignores them on load', async () => {
    await r.redis.hset(`${r.prefix}auth:revoked`, userField('d1', 'old'), String(Date.now() - 1000));
    await new RevocationPublisher(r.redis, r.prefix, 500).revokeUser('d1', 'new');
    expect(await r.redis.hexists(`${r.prefix}auth:revoked`, userField('d1', 'old'))).toBe(0);
    expect(await r.redis.hexists(`${r.prefix}auth:revoked`, userField('d1', 'new'))).toBe(1);
  });

  it('ignores messages that are not entries', async () => {
    const w = await watch();
    await r.redis.publish(`${r.prefix}auth:revoked`, 'not json');
    await r.redis.publish(`${r.prefix}auth:revoked`, JSON.stringify({ __proto__: 1 }));
    await new RevocationPublisher(r.redis, r.prefix).revokeUser('d1', 'erin');
    await until(() => w.revoked({ domainId: 'd1', userId: 'erin', workspaceId: '', issuedAtMs: 0 }));
  });

  it('retries a load that failed as the subscription started, until it succeeds', async () => {
    const r2 = createTestRedis('revocations-retry');
    try {
      // A value of the wrong type makes the first loads fail (WRONGTYPE), as a connection not yet ready would.
      await r2.redis.set(`${r2.prefix}auth:revoked`, 'not a hash');
      const w = new AccessRevocations(r2.redis, { prefix: r2.prefix });
      watchers.push(w);
      const started = w.start();
      await new Promise((res) => setTimeout(res, 200));
      await r2.redis.del(`${r2.prefix}auth:revoked`);
      await r2.redis.hset(`${r2.prefix}auth:revoked`, userField('d7', 'gina'), String(Date.now()));
      await started;
      expect(w.revoked({ domainId: 'd7', userId: 'gina', workspaceId: '', issuedAtMs: 0 })).toBe(true);
    } finally {
      await r2.cleanup();
    }
  });
});
