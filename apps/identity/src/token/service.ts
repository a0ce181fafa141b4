import type { RoleType, Scope, TokenClaims } from '@platform/auth';
import { errors } from '@platform/errors';
import type { IdentityDeps } from '../deps';
import { verifyPassword } from './password';
import { verifyTotp } from './totp';
import { openMfaSecret } from '../mfa/secret';
import { managedRole } from './roles';
import { AttemptCounter } from './attempts';
import { IssueRateLimits } from './rate-limits';
import { OidcRejection, OidcUnavailable, OidcVerifier } from '../external-auth/oidc';
import { externalAuthSettings } from '../external-auth/service';
import { databaseNowMs, lockForReading } from './grant-locks';
import { findUserIgnoringCase } from '../common';
import { authFailure, readGrant, type GrantInput } from './grant';

export type { GrantInput } from './grant';

export interface IssueInput {
  credentials: Record<string, unknown>;
  domain_id: string;
  auth_type?: 'LOCAL' | 'EXTERNAL' | 'MFA';
  timeout?: number;
  verify_code?: string;
}



/** The provider's token of an EXTERNAL issue: `credentials.access_token` or `credentials.id_token`, one of them. */
function externalToken(credentials: Record<string, unknown>): string {
  const given = (['access_token', 'id_token'] as const).filter((k) => Object.hasOwn(credentials, k) && credentials[k] !== undefined && credentials[k] !== '');
  if (!given.length) {
    // Other credentials (a password login's user_id, password) are credentials that do not log in
    // here: the 401 of every refusal, configured or not. Nothing at all is a request to fix: a 400.
    if (Object.keys(credentials).length) throw authFailure();
    throw errors.requiredParameter('credentials.access_token');
  }
  if (given.length > 1) throw errors.invalidParameter('credentials', 'give access_token or id_token, not both');
  const key = given[0];
  const token = credentials[key];
  if (typeof token !== 'string') throw errors.invalidParameterType(`credentials.${key}`, 'str');
  if (token.length > 16384) throw errors.invalidParameter(`credentials.${key}`, 'too long');
  return token;
}

const loginBlocked = (limit: number, seconds: number) =>
  errors.unauthenticated('ERROR_LOGIN_BLOCKED', `Login is blocked after ${limit} failed attempts; retry in at most ${seconds} seconds.`);

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
      throw errors.unauthenticated('ERROR_MFA_REQUIRED', 'MFA is required: issue again with auth_type MFA and verify_code.');
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
        throw errors.unauthenticated('ERROR_INVALID_CREDENTIALS', 'Invalid credentials. (verify_code)');
      }
      await this.mfaAttempts.succeed(mfaKey);
      await redis.del(pendingKey);
    }

    return this.userTokens(user, input.timeout);
  }

  /**
   * A logged-in user's USER-scoped access and refresh tokens; its last_accessed_at is now. The user is
   * read again under the lock revoking changes take (token/grant-locks.ts): still enabled, the same
   * password (hash) and auth type that were checked, else the same 401 as any refusal; the tokens are
   * dated at that reading, so a disable or a new password that came after it ends them too.
   */
  private async userTokens(checked: { domain_id: string; user_id: string; password_hash: string; auth_type: string }, timeout: number | undefined) {
    const { prisma, config } = this.deps;
    const key = { domain_id: checked.domain_id, user_id: checked.user_id };
    const issuedAtMs = await prisma.$transaction(async (tx) => {
      await lockForReading(tx, key.domain_id, key.user_id);
      const now = await tx.user.findUnique({ where: { domain_id_user_id: key }, select: { state: true, password_hash: true, auth_type: true } });
      if (!now || now.state !== 'ENABLED' || now.password_hash !== checked.password_hash || now.auth_type !== checked.auth_type) throw authFailure();
      const at = await databaseNowMs(tx);
      await tx.user.update({ where: { domain_id_user_id: key }, data: { last_accessed_at: new Date(at) } });
      return at;
    });

    const base = { user_id: key.user_id, domain_id: key.domain_id, workspace_id: '', role_type: 'USER' as RoleType, role_id: '', scope: 'USER' as Scope, permissions: ['*'], user_type: 'USER' as const };
    const [access_token, refresh_token] = await Promise.all([
      this.deps.signer.sign({ ...base, token_type: 'ACCESS_TOKEN' }, this.accessTtl(timeout), issuedAtMs),
      this.deps.signer.sign({ ...base, token_type: 'REFRESH_TOKEN' }, config.token.refreshTimeout, issuedAtMs),
    ]);
    return { access_token, refresh_token };
  }

  /**
   * token/issue with auth_type EXTERNAL: the token the domain's OpenID provider gave the caller names the
   * user (docs/decisions/identity.md). Every refusal (a domain without external auth included) is the
   * same 401, its reason only in the log; a provider that cannot be asked is a 503. Once the user is known, the per-user rate limit and the
   * login lockout apply exactly as to a password.
   */
  private async issueExternal(input: IssueInput) {
    const { config, prisma, logger } = this.deps;
    const token = externalToken(input.credentials);
    const refuse = (reason: string, userId?: string) => {
      logger.warn({ domain_id: input.domain_id, ...(userId !== undefined && { user_id: userId }), reason }, 'external login refused');
      return authFailure();
    };
    // Whether a domain has SSO is not told to a caller without a token: the same 401 as any refusal (#27).
    const settings = await externalAuthSettings(this.deps, input.domain_id);
    if (!settings) throw refuse('external authentication is not configured for the domain');

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
    // The claim names the user whose id it equals but for case (ids are unique ignoring case, #27):
    // 'Alice@Example.com' from the provider is 'alice@example.com' here, and shares its counts.
    const userId = (await findUserIgnoringCase(prisma, input.domain_id, claim)) ?? claim.toLowerCase();

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
      tokens = await this.userTokens(user, input.timeout);
    } catch (e) {
      await this.loginAttempts.fail(loginKey);
      throw e;
    }
    await this.loginAttempts.succeed(loginKey);
    return tokens;
  }

  /**
   * token/grant: the user, their bindings and the workspace are read under the lock their revoking
   * changes take (token/grant-locks.ts), and the token is dated at that reading.
   */
  async grant(input: GrantInput) {
    const claims = await this.deps.verifier.verify(input.token);
    if (input.grant_type !== 'REFRESH_TOKEN' || claims.token_type !== 'REFRESH_TOKEN') {
      throw errors.notAllowed('ERROR_INVALID_GRANT_TYPE', `Grant type ${input.grant_type} does not match the token (${claims.token_type}).`);
    }
    if (input.domain_id && input.domain_id !== claims.domain_id) throw authFailure();
    const domainId = claims.domain_id;
    const lockedWorkspace = input.scope === 'WORKSPACE' ? input.workspace_id : undefined;
    const read = await this.deps.prisma.$transaction(async (tx) => {
      await lockForReading(tx, domainId, claims.user_id, lockedWorkspace);
      const role = await readGrant(tx, claims, input);
      return { ...role, issuedAtMs: await databaseNowMs(tx) };
    });
    const { roleType, roleId, workspaceId } = read;

    const rolePermissions = roleType === 'USER' ? ['*'] : managedRole(roleType).permissions;
    const permissions = input.permissions?.length
      ? input.permissions.filter((p) => rolePermissions.some((rp) => rp === '*' || rp === p))
      : rolePermissions;
    if (input.permissions?.length && permissions.length === 0) throw errors.permissionDenied('None of the requested permissions is granted by the role.');

    const token: TokenClaims = {
      token_type: 'ACCESS_TOKEN',
      user_id: claims.user_id,
      domain_id: domainId,
      workspace_id: workspaceId,
      role_type: roleType,
      role_id: roleId,
      scope: input.scope,
      permissions,
      user_type: 'USER',
    };
    const access_token = await this.deps.signer.sign(token, this.accessTtl(input.timeout), read.issuedAtMs);
    return { access_token, role_type: roleType, role_id: roleId, domain_id: domainId, workspace_id: workspaceId };
  }
}
