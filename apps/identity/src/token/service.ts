import type { RoleType, Scope, TokenClaims } from '@platform/auth';
import { ApiError, errors } from '@platform/errors';
import type { IdentityDeps } from '../deps';
import { verifyPassword } from './password';
import { verifyTotp } from './totp';
import { openMfaSecret } from '../mfa/secret';
import { managedRole } from './roles';
import { AttemptCounter } from './attempts';
import { IssueRateLimits } from './rate-limits';
import { OidcRejection, OidcUnavailable, OidcVerifier } from '../external-auth/oidc';
import { externalAuthSettings } from '../external-auth/service';

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

/**
 * A refresh token counts only for the user it was issued to and only until their sessions were ended:
 * issued after the user row was created (a deleted user's token never opens a new user of the same id)
 * and after `refresh_valid_after` (a disable, a new password). Tokens from before `iat_ms` existed are
 * placed at the end of their second for the first check, at its start for the second.
 */
function refreshStillValid(claims: { iat?: number; iat_ms?: number }, user: { created_at: Date; refresh_valid_after: Date | null }): boolean {
  const exact = typeof claims.iat_ms === 'number' && Number.isFinite(claims.iat_ms);
  const earliest = exact ? claims.iat_ms! : (claims.iat ?? 0) * 1000;
  const latest = exact ? claims.iat_ms! : earliest + 999;
  if (latest < user.created_at.getTime()) return false;
  return !user.refresh_valid_after || earliest > user.refresh_valid_after.getTime();
}

const authFailure = () => errors.authenticateFailure('Authenticate failure. (credentials are invalid)');

/** The provider's token of an EXTERNAL issue: `credentials.access_token` or `credentials.id_token`, one of them. */
function externalToken(credentials: Record<string, unknown>): string {
  const given = (['access_token', 'id_token'] as const).filter((k) => Object.hasOwn(credentials, k) && credentials[k] !== undefined && credentials[k] !== '');
  if (!given.length) throw errors.requiredParameter('credentials.access_token');
  if (given.length > 1) throw errors.invalidParameter('credentials', 'give access_token or id_token, not both');
  const key = given[0];
  const token = credentials[key];
  if (typeof token !== 'string') throw errors.invalidParameterType(`credentials.${key}`, 'str');
  if (token.length > 16384) throw errors.invalidParameter(`credentials.${key}`, 'too long');
  return token;
}

const loginBlocked = (limit: number, seconds: number) =>
  new ApiError(401, 'ERROR_LOGIN_BLOCKED', `Login is blocked after ${limit} failed attempts; retry in at most ${seconds} seconds.`);

export class TokenService {
  private readonly rateLimits: IssueRateLimits;
  private readonly loginAttempts: AttemptCounter;
  private readonly mfaAttempts: AttemptCounter;
  private readonly oidc: OidcVerifier;

  constructor(private readonly deps: IdentityDeps) {
    const { config, redis } = deps;
    this.rateLimits = new IssueRateLimits(redis, deps.redisPrefix, config.issueRateLimit);
    // Settings are read per attempt, so a test (or a reload) can change them on a running service.
    this.loginAttempts = new AttemptCounter(redis, () => ({ limit: config.login.maxFailures, windowSeconds: config.login.blockSeconds }));
    this.mfaAttempts = new AttemptCounter(redis, () => ({ limit: config.login.mfaMaxFailures, windowSeconds: config.login.mfaBlockSeconds }));
    this.oidc = new OidcVerifier(() => config.externalAuth);
  }

  private key(kind: string, domainId: string, userId: string) {
    return `${this.deps.redisPrefix}identity:${kind}:{${domainId}}:${userId}`;
  }

  private accessTtl(timeout: number | undefined) {
    const { accessDefault, accessMax } = this.deps.config.token;
    return Math.min(timeout ?? accessDefault, accessMax);
  }

  /** token/issue for a caller at `clientIp`: rate limits, then the lockout, then the credentials. */
  async issue(input: IssueInput, clientIp = '') {
    const { config } = this.deps;
    await this.rateLimits.consumeAddress(clientIp);
    const authType = input.auth_type ?? 'LOCAL';
    if (authType === 'EXTERNAL') return this.issueExternal(input);
    const userId = input.credentials.user_id;
    const password = input.credentials.password;
    if (typeof userId !== 'string' || !userId) throw errors.requiredParameter('credentials.user_id');
    if (userId.length > 255) throw errors.invalidParameter('credentials.user_id', 'too long');
    const hasPassword = typeof password === 'string' && password.length > 0;
    if (!hasPassword && authType !== 'MFA') throw errors.requiredParameter('credentials.password');
    await this.rateLimits.consumeUser(input.domain_id, userId);

    // The attempt is counted before anything is checked; past the limit it is refused unchecked. An
    // unknown user is counted and refused the same way.
    const loginKey = this.key('login-attempts', input.domain_id, userId);
    if (!(await this.loginAttempts.begin(loginKey))) throw loginBlocked(config.login.maxFailures, config.login.blockSeconds);
    let tokens: Awaited<ReturnType<TokenService['checkCredentials']>>;
    try {
      tokens = await this.checkCredentials(input, userId, hasPassword ? (password as string) : undefined);
    } catch (e) {
      await this.loginAttempts.fail(loginKey);
      throw e;
    }
    if (!tokens) {
      // The password was right and a TOTP code is still to come: neither a failure nor a success.
      await this.loginAttempts.release(loginKey);
      throw new ApiError(401, 'ERROR_MFA_REQUIRED', 'MFA is required: issue again with auth_type MFA and verify_code.');
    }
    await this.loginAttempts.succeed(loginKey);
    return tokens;
  }

  /** The tokens, or undefined when the password was right and a TOTP code is still needed. Throws on any failure. */
  private async checkCredentials(input: IssueInput, userId: string, password: string | undefined) {
    const { redis, prisma, config } = this.deps;
    const [domain, user] = await Promise.all([
      prisma.domain.findUnique({ where: { domain_id: input.domain_id } }),
      prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: input.domain_id, user_id: userId } } }),
    ]);
    const pendingKey = this.key('mfa-pending', input.domain_id, userId);

    // First factor: the password, or (second MFA step) a password check passed in the last minutes.
    const firstFactor =
      password !== undefined ? await verifyPassword(user?.password_hash, password.slice(0, 1024)) : Boolean(user) && (await redis.get(pendingKey)) === '1';
    // An EXTERNAL user logs in through its provider only (its password_hash is empty anyway).
    if (!firstFactor || !domain || domain.state !== 'ENABLED' || !user || user.state !== 'ENABLED' || user.auth_type !== 'LOCAL') throw authFailure();

    if (user.mfa_enabled && user.mfa_secret) {
      if (!input.verify_code) {
        await redis.set(pendingKey, '1', 'EX', config.login.mfaPendingSeconds);
        return undefined;
      }
      // TOTP codes have their own count, taken before the code is checked.
      const mfaKey = this.key('mfa-attempts', input.domain_id, userId);
      if (!(await this.mfaAttempts.begin(mfaKey))) throw loginBlocked(config.login.mfaMaxFailures, config.login.mfaBlockSeconds);
      const counter = verifyTotp(openMfaSecret(this.deps.config.secretKeys, user), input.verify_code);
      // A code is good once: replaying it within its window is refused.
      const fresh =
        counter !== undefined && (await redis.set(this.key('mfa-used', input.domain_id, `${userId}:${counter}`), '1', 'EX', 120, 'NX')) === 'OK';
      if (!fresh) {
        await this.mfaAttempts.fail(mfaKey);
        throw new ApiError(401, 'ERROR_INVALID_CREDENTIALS', 'Invalid credentials. (verify_code)');
      }
      await this.mfaAttempts.succeed(mfaKey);
      await redis.del(pendingKey);
    }

    return this.userTokens(user.domain_id, userId, input.timeout);
  }

  /** A logged-in user's USER-scoped access and refresh tokens; its last_accessed_at is now. */
  private async userTokens(domainId: string, userId: string, timeout: number | undefined) {
    const { prisma, config } = this.deps;
    await prisma.user.update({ where: { domain_id_user_id: { domain_id: domainId, user_id: userId } }, data: { last_accessed_at: new Date() } });

    const base = { user_id: userId, domain_id: domainId, workspace_id: '', role_type: 'USER' as RoleType, role_id: '', scope: 'USER' as Scope, permissions: ['*'], user_type: 'USER' as const };
    const [access_token, refresh_token] = await Promise.all([
      this.deps.signer.sign({ ...base, token_type: 'ACCESS_TOKEN' }, this.accessTtl(timeout)),
      this.deps.signer.sign({ ...base, token_type: 'REFRESH_TOKEN' }, config.token.refreshTimeout),
    ]);
    return { access_token, refresh_token };
  }

  /**
   * token/issue with auth_type EXTERNAL: the token the domain's OpenID provider gave the caller names the
   * user (docs/decisions/identity.md). Every refusal is the same 401, its reason only in the log; a
   * provider that cannot be asked is a 503. Once the user is known, the per-user rate limit and the
   * login lockout apply exactly as to a password.
   */
  private async issueExternal(input: IssueInput) {
    const { config, prisma, logger } = this.deps;
    const settings = await externalAuthSettings(this.deps, input.domain_id);
    if (!settings) {
      throw new ApiError(400, 'ERROR_EXTERNAL_AUTH_NOT_CONFIGURED', `External authentication is not configured for domain ${input.domain_id}.`);
    }
    const token = externalToken(input.credentials);
    const refuse = (reason: string, userId?: string) => {
      logger.warn({ domain_id: input.domain_id, ...(userId !== undefined && { user_id: userId }), reason }, 'external login refused');
      return authFailure();
    };

    let claims: Record<string, unknown>;
    try {
      claims = await this.oidc.verify(settings, token);
    } catch (e) {
      if (e instanceof OidcRejection) throw refuse(e.message);
      if (e instanceof OidcUnavailable) {
        logger.warn({ domain_id: input.domain_id, issuer: settings.issuer, reason: e.message }, 'external login: the OpenID provider cannot be reached');
        throw errors.unavailable('The external identity provider cannot be reached; try again later.');
      }
      throw e;
    }
    const claim = Object.hasOwn(claims, settings.user_id_claim) ? claims[settings.user_id_claim] : undefined;
    if (typeof claim !== 'string' || !claim || claim.length > 255) throw refuse(`the token has no usable ${settings.user_id_claim} claim`);
    const userId = claim;

    await this.rateLimits.consumeUser(input.domain_id, userId);
    const loginKey = this.key('login-attempts', input.domain_id, userId);
    if (!(await this.loginAttempts.begin(loginKey))) throw loginBlocked(config.login.maxFailures, config.login.blockSeconds);
    let tokens: { access_token: string; refresh_token: string };
    try {
      const [domain, user] = await Promise.all([
        prisma.domain.findUnique({ where: { domain_id: input.domain_id } }),
        prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: input.domain_id, user_id: userId } } }),
      ]);
      if (!domain || domain.state !== 'ENABLED') throw refuse('the domain is not enabled', userId);
      if (!user) throw refuse('no such user in the domain', userId);
      if (user.auth_type !== 'EXTERNAL') throw refuse(`the user's auth_type is ${user.auth_type}, not EXTERNAL`, userId);
      if (user.state !== 'ENABLED') throw refuse(`the user is ${user.state}`, userId);
      tokens = await this.userTokens(input.domain_id, userId, input.timeout);
    } catch (e) {
      await this.loginAttempts.fail(loginKey);
      throw e;
    }
    await this.loginAttempts.succeed(loginKey);
    return tokens;
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
    if (!refreshStillValid(claims, user)) throw errors.authenticateFailure('The session has ended (the user was disabled or their password changed); log in again.');

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
