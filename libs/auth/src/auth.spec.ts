import { generateSigningKeys, isAllowed, PERMISSION_PATTERN, permissionMatches, TokenSigner, TokenVerifier, bearerToken, type AuthContext } from './index';

const keys = generateSigningKeys();
const signer = new TokenSigner(keys.privateKey);
const claims = {
  token_type: 'ACCESS_TOKEN' as const,
  user_id: 'u1',
  domain_id: 'd1',
  workspace_id: 'w1',
  role_type: 'WORKSPACE_OWNER' as const,
  role_id: 'r',
  scope: 'WORKSPACE' as const,
  permissions: ['*'],
  user_type: 'USER' as const,
};

describe('auth', () => {
  it('verifies a token into the caller context', async () => {
    const v = new TokenVerifier(keys.publicKey);
    const ctx = await v.authenticate(await signer.sign(claims, 60));
    expect(ctx).toMatchObject({ userId: 'u1', domainId: 'd1', workspaceId: 'w1', roleType: 'WORKSPACE_OWNER', scope: 'WORKSPACE' });
  });

  it('refuses a token signed by another key', async () => {
    const other = new TokenSigner(generateSigningKeys().privateKey);
    await expect(new TokenVerifier(keys.publicKey).authenticate(await other.sign(claims, 60))).rejects.toMatchObject({ code: 'ERROR_AUTHENTICATE_FAILURE' });
  });

  it('refuses unsigned (alg none), HMAC-with-the-public-key (algorithm confusion) and re-signed tampered tokens', async () => {
    const { createHmac } = await import('node:crypto');
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = { ...claims, role_type: 'DOMAIN_ADMIN', scope: 'DOMAIN', iss: 'x', aud: 'x', exp: now + 60, iat: now };
    const genuine = await signer.sign(claims, 60);
    const [h, p] = genuine.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const v = new TokenVerifier(keys.publicKey);
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...payload, role_type: 'DOMAIN_ADMIN' })}.`;
    const hsInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...payload, role_type: 'DOMAIN_ADMIN' })}`;
    const hs = `${hsInput}.${createHmac('sha256', keys.publicPem).update(hsInput).digest('base64url')}`;
    const swapped = `${h}.${b64({ ...payload, domain_id: 'd2' })}.${genuine.split('.')[2]}`;
    for (const token of [none, hs, swapped, `${b64({ alg: 'none' })}.${b64(body)}.`]) {
      await expect(v.authenticate(token)).rejects.toMatchObject({ code: 'ERROR_AUTHENTICATE_FAILURE', status: 401 });
    }
  });

  it('caches verified tokens only until they expire', async () => {
    const v = new TokenVerifier(keys.publicKey, 2);
    const token = await signer.sign(claims, 1);
    await v.authenticate(token);
    await expect(v.authenticate(token)).resolves.toMatchObject({ userId: 'u1' });
    await new Promise((r) => setTimeout(r, 2100));
    await expect(v.authenticate(token)).rejects.toMatchObject({ code: 'ERROR_AUTHENTICATE_FAILURE', message: 'Token is expired.' });
  });

  it('answers a token verified before without waiting, and still refuses it once revoked or expired', async () => {
    const v = new TokenVerifier(keys.publicKey);
    let revokedBefore = 0;
    v.useRevocations({ revoked: (t) => t.issuedAtMs < revokedBefore });
    const token = await signer.sign(claims, 2); // expires 1-2 s from now (exp is in whole seconds)
    expect(v.authenticateCached(token)).toBeUndefined(); // never seen: the caller goes through authenticate
    await v.authenticate(token);
    expect(v.authenticateCached(token)).toMatchObject({ userId: 'u1', domainId: 'd1' });
    revokedBefore = Date.now() + 1;
    expect(() => v.authenticateCached(token)).toThrow(expect.objectContaining({ code: 'ERROR_AUTHENTICATE_FAILURE', message: 'Token is revoked.' }));
    revokedBefore = 0;
    await new Promise((r) => setTimeout(r, 2100));
    expect(v.authenticateCached(token)).toBeUndefined(); // expired: dropped from the cache
  });

  it('keeps the cache bounded', async () => {
    const v = new TokenVerifier(keys.publicKey, 2);
    for (let i = 0; i < 5; i++) await v.authenticate(await signer.sign({ ...claims, user_id: `u${i}` }, 60));
    expect((v as unknown as { verified: Map<string, unknown> }).verified.size).toBe(2);
  });

  it('matches permissions and role types', () => {
    expect(permissionMatches('*', 'identity:ProjectGroup.write')).toBe(true);
    expect(permissionMatches('identity:*', 'identity:ProjectGroup.write')).toBe(true);
    expect(permissionMatches('identity:ProjectGroup.read', 'identity:ProjectGroup.write')).toBe(false);
    // Upstream's prefix match (python-core authorization_handler): `inventory:` covers every inventory permission.
    expect(permissionMatches('inventory:', 'inventory:CloudService.read')).toBe(true);
    expect(permissionMatches('inventory:CloudService', 'inventory:CloudService.write')).toBe(true);
    expect(permissionMatches('inventory:', 'cost-analysis:CostQuerySet.read')).toBe(false);
    expect(permissionMatches('', 'inventory:CloudService.read')).toBe(false);
    expect(PERMISSION_PATTERN.test('inventory:')).toBe(true);
    expect(PERMISSION_PATTERN.test('cost-analysis:CostQuerySet.read')).toBe(true);
    for (const bad of ['', 'inventory', ':x', 'a:b c', 'Inventory:x', '__proto__']) expect(PERMISSION_PATTERN.test(bad)).toBe(false);
    const custom = { roleType: 'WORKSPACE_MEMBER', permissions: ['inventory:'] } as AuthContext;
    expect(isAllowed(custom, { permission: 'inventory:CloudService.read', roles: ['WORKSPACE_MEMBER'] })).toBe(true);
    expect(isAllowed(custom, { permission: 'cost-analysis:CostQuerySet.read', roles: ['WORKSPACE_MEMBER'] })).toBe(false);
    // An operation upstream declares without a permission: the role type alone decides.
    expect(isAllowed(custom, { permission: '', roles: ['WORKSPACE_MEMBER'] })).toBe(true);
    expect(isAllowed(custom, { permission: '', roles: ['DOMAIN_ADMIN'] })).toBe(false);
    const ctx = { roleType: 'WORKSPACE_MEMBER', permissions: ['*'] } as AuthContext;
    expect(isAllowed(ctx, { permission: 'x', roles: ['WORKSPACE_OWNER'] })).toBe(false);
    expect(isAllowed(ctx, { permission: 'x', roles: ['WORKSPACE_MEMBER'] })).toBe(true);
  });

  it('reads only well-formed Bearer headers', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(() => bearerToken(undefined)).toThrow();
    expect(() => bearerToken('Bearer a b')).toThrow();
  });
});
