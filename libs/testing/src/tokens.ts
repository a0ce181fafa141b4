import { generateSigningKeys, TokenSigner, TokenVerifier, type RoleType, type Scope } from '@platform/auth';

/** One ephemeral key pair per test process: mint tokens the way identity does and verify them. */
const keys = generateSigningKeys();
export const testSigner = new TokenSigner(keys.privateKey);
export const testVerifier = new TokenVerifier(keys.publicKey);
export const testKeys = { privatePem: keys.privatePem, publicPem: keys.publicPem };

export interface MintOptions {
  userId?: string;
  domainId?: string;
  workspaceId?: string;
  roleType?: RoleType;
  roleId?: string;
  scope?: Scope;
  permissions?: string[];
  ttlSeconds?: number;
  tokenType?: 'ACCESS_TOKEN' | 'REFRESH_TOKEN';
}

/** An access token (by default a workspace owner of domain-test/workspace-test), signed by `signer` (default the test key). */
export function mintToken(o: MintOptions = {}, signer: TokenSigner = testSigner): Promise<string> {
  const roleType = o.roleType ?? 'WORKSPACE_OWNER';
  const scope = o.scope ?? (roleType === 'DOMAIN_ADMIN' ? 'DOMAIN' : roleType === 'USER' ? 'USER' : 'WORKSPACE');
  return signer.sign(
    {
      token_type: o.tokenType ?? 'ACCESS_TOKEN',
      user_id: o.userId ?? 'test-user',
      domain_id: o.domainId ?? 'domain-test',
      workspace_id: scope === 'WORKSPACE' ? (o.workspaceId ?? 'workspace-test') : '',
      role_type: roleType,
      role_id: o.roleId ?? `managed-${roleType.toLowerCase().replace(/_/g, '-')}`,
      scope,
      permissions: o.permissions ?? ['*'],
      user_type: 'USER',
    },
    o.ttlSeconds ?? 600,
  );
}

export const bearer = async (o: MintOptions = {}) => `Bearer ${await mintToken(o)}`;
