import type { RoleType, Scope, TokenClaims } from '@platform/auth';
import { ApiError, errors } from '@platform/errors';
import type { IdentityDeps } from '../deps';
import { verifyPassword } from './password';
import { verifyTotp } from './totp';
import { managedRole } from './roles';

export interface IssueInput {
  credentials: Record<string, unknown>;
  domain_id: string;
  auth_type?: 'LOCAL' | 'EXTERNAL' | 'MFA';
  timeout?: number;
  verify_code?: string;
}

export interface GrantInput {
  grant_type: 'REFRESH_TOKEN' | 'SYSTEM_TOKEN';
  token: string;
  scope: Scope;
  timeout?: number;
  permissions?: string[];
  domain_id?: string;
  workspace_id?: string;
}

const authFailure = () => errors.authenticateFailure('Authenticate failure. (credentials are invalid)');

export class TokenService {
  constructor(private readonly deps: IdentityDeps) {}

  private key(kind: string, domainId: string, userId: string) {
    return `${this.deps.redisPrefix}identity:${kind}:{${domainId}}:${userId}`;
  }

  private accessTtl(timeout: number | undefined) {
    const { accessDefault, accessMax } = this.deps.config.token;
    return Math.min(timeout ?? accessDefault, accessMax);
  }

  private async recordFailure(domainId: string, userId: string) {
    const key = this.key('login-failures', domainId, userId);
    await this.deps.redis.multi().incr(key).expire(key, this.deps.config.login.blockSeconds).exec();
  }

  async issue(input: IssueInput) {
    const { redis, prisma, config } = this.deps;
    const authType = input.auth_type ?? 'LOCAL';
    if (authType === 'EXTERNAL') {
      // No external auth plugin (OIDC, LDAP, ...) can be configured for a domain in this deployment.
      throw new ApiError(400, 'ERROR_EXTERNAL_AUTH_NOT_CONFIGURED', `External authentication is not configured for domain ${input.domain_id}.`);
    }
    const userId = input.credentials.user_id;
    const password = input.credentials.password;
    if (typeof userId !== 'string' || !userId) throw errors.requiredParameter('credentials.user_id');
    if (userId.length > 255) throw errors.invalidParameter('credentials.user_id', 'too long');

    const failures = Number((await redis.get(this.key('login-failures', input.domain_id, userId))) ?? 0);
    if (failures >= config.login.maxFailures) {
      throw new ApiError(401, 'ERROR_LOGIN_BLOCKED', `Login is blocked for ${config.login.blockSeconds} seconds after ${failures} failed attempts.`);
    }

    const [domain, user] = await Promise.all([
      prisma.domain.findUnique({ where: { domain_id: input.domain_id } }),
      prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: input.domain_id, user_id: userId } } }),
    ]);
    const pendingKey = this.key('mfa-pending', input.domain_id, userId);

    // First factor: the password, or (second MFA step) a password check passed in the last minutes.
    let firstFactor = false;
    if (typeof password === 'string' && password.length > 0) {
      firstFactor = await verifyPassword(user?.password_hash, password.slice(0, 1024));
    } else if (authType === 'MFA') {
      firstFactor = Boolean(user) && (await redis.get(pendingKey)) === '1';
    } else {
      throw errors.requiredParameter('credentials.password');
    }
    if (!firstFactor || !domain || domain.state !== 'ENABLED' || !user || user.state !== 'ENABLED') {
      await this.recordFailure(input.domain_id, userId);
      throw authFailure();
    }

    if (user.mfa_enabled && user.mfa_secret) {
      if (!input.verify_code) {
        await redis.set(pendingKey, '1', 'EX', config.login.mfaPendingSeconds);
        throw new ApiError(401, 'ERROR_MFA_REQUIRED', 'MFA is required: issue again with auth_type MFA and verify_code.');
      }
      const counter = verifyTotp(user.mfa_secret, input.verify_code);
      // A code is good once: replaying it within its window is refused.
      const fresh =
        counter !== undefined && (await redis.set(this.key('mfa-used', input.domain_id, `${userId}:${counter}`), '1', 'EX', 120, 'NX')) === 'OK';
      if (!fresh) {
        await this.recordFailure(input.domain_id, userId);
        throw new ApiError(401, 'ERROR_INVALID_CREDENTIALS', 'Invalid credentials. (verify_code)');
      }
      await redis.del(pendingKey);
    }

    await redis.del(this.key('login-failures', input.domain_id, userId));
    await prisma.user.update({ where: { domain_id_user_id: { domain_id: user.domain_id, user_id: userId } }, data: { last_accessed_at: new Date() } });

    const base = { user_id: userId, domain_id: user.domain_id, workspace_id: '', role_type: 'USER' as RoleType, role_id: '', scope: 'USER' as Scope, permissions: ['*'], user_type: 'USER' as const };
    const [access_token, refresh_token] = await Promise.all([
      this.deps.signer.sign({ ...base, token_type: 'ACCESS_TOKEN' }, this.accessTtl(input.timeout)),
      this.deps.signer.sign({ ...base, token_type: 'REFRESH_TOKEN' }, config.token.refreshTimeout),
    ]);
    return { access_token, refresh_token };
  }

  async grant(input: GrantInput) {
    const { prisma } = this.deps;
    const claims = await this.deps.verifier.verify(input.token);
    if (input.grant_type !== 'REFRESH_TOKEN' || claims.token_type !== 'REFRESH_TOKEN') {
      throw new ApiError(400, 'ERROR_INVALID_GRANT_TYPE', `Grant type ${input.grant_type} does not match the token (${claims.token_type}).`);
    }
    if (input.domain_id && input.domain_id !== claims.domain_id) throw authFailure();
    const domainId = claims.domain_id;
    const [domain, user] = await Promise.all([
      prisma.domain.findUnique({ where: { domain_id: domainId } }),
      prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: domainId, user_id: claims.user_id } } }),
    ]);
    if (!domain || domain.state !== 'ENABLED' || !user || user.state !== 'ENABLED') throw authFailure();

    const bindings = await prisma.roleBinding.findMany({ where: { domain_id: domainId, user_id: user.user_id } });
    const domainAdmin = bindings.find((b) => b.role_type === 'DOMAIN_ADMIN');
    let roleType: RoleType;
    let roleId: string;
    let workspaceId = '';

    switch (input.scope) {
      case 'DOMAIN':
        if (!domainAdmin) throw errors.permissionDenied('Scope DOMAIN needs the DOMAIN_ADMIN role.');
        roleType = 'DOMAIN_ADMIN';
        roleId = domainAdmin.role_id;
        break;
      case 'WORKSPACE': {
        if (!input.workspace_id) throw errors.requiredParameter('workspace_id');
        const ws = await prisma.workspace.findUnique({ where: { domain_id_workspace_id: { domain_id: domainId, workspace_id: input.workspace_id } } });
        if (!ws) throw errors.notFound('workspace_id', input.workspace_id);
        if (ws.state !== 'ENABLED') throw new ApiError(400, 'ERROR_WORKSPACE_STATE', `Workspace ${ws.workspace_id} is disabled.`);
        const binding = bindings.find((b) => b.workspace_id === ws.workspace_id && b.resource_group === 'WORKSPACE');
        if (domainAdmin) {
          roleType = 'WORKSPACE_OWNER';
          roleId = domainAdmin.role_id;
        } else if (binding) {
          roleType = binding.role_type as RoleType;
          roleId = binding.role_id;
        } else {
          throw errors.permissionDenied(`No role in workspace ${ws.workspace_id}.`);
        }
        workspaceId = ws.workspace_id;
        break;
      }
      case 'USER':
        roleType = 'USER';
        roleId = '';
        break;
      default:
        throw errors.invalidParameter('scope', `scope ${input.scope} cannot be granted with a user's refresh token`);
    }

    const rolePermissions = roleType === 'USER' ? ['*'] : managedRole(roleType).permissions;
    const permissions = input.permissions?.length
      ? input.permissions.filter((p) => rolePermissions.some((rp) => rp === '*' || rp === p))
      : rolePermissions;
    if (input.permissions?.length && permissions.length === 0) throw errors.permissionDenied('None of the requested permissions is granted by the role.');

    const token: TokenClaims = {
      token_type: 'ACCESS_TOKEN',
      user_id: user.user_id,
      domain_id: domainId,
      workspace_id: workspaceId,
      role_type: roleType,
      role_id: roleId,
      scope: input.scope,
      permissions,
      user_type: 'USER',
    };
    const access_token = await this.deps.signer.sign(token, this.accessTtl(input.timeout));
    return { access_token, role_type: roleType, role_id: roleId, domain_id: domainId, workspace_id: workspaceId };
  }
}
