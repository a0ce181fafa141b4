import { generateSigningKeys, isAllowed, permissionMatches, TokenSigner, TokenVerifier, bearerToken, type AuthContext } from './index';

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

  it('caches verified tokens only until they expire', async () => {
    const v = new TokenVerifier(keys.publicKey, 2);
    const token = await signer.sign(claims, 1);
    await v.authenticate(token);
    await expect(v.authenticate(token)).resolves.toMatchObject({ userId: 'u1' });
    await new Promise((r) => setTimeout(r, 2100));
    await expect(v.authenticate(token)).rejects.toMatchObject({ code: 'ERROR_AUTHENTICATE_FAILURE', message: 'Token is expired.' });
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
