import { permissionMatches, type RoleType, type Scope, type TokenClaims } from '@platform/auth';
import { ApiError, errors, pluginErrors } from '@platform/errors';
import { UNSAFE_TEXT } from '@platform/http';
import type { Identity } from '@platform/plugin';
import type { IdentityDeps } from '../deps';
import { verifyPassword } from '../user/password';
import { verifyTotp } from '../mfa/totp';
import { openMfaSecret } from '../mfa/secret';
import { findRole, rolePermissions as grantedPermissions } from '../role/service';
import { AttemptCounter } from './attempts';
import { IssueRateLimits } from './rate-limits';
import { OidcRejection, OidcUnavailable, OidcVerifier } from '../external-auth/oidc';
import { enabledExternalAuth, oidcSettingsOf } from '../external-auth/service';
import type { DomainExternalAuth } from '../external-auth/repository';
import { chooseAuthPlugin } from '../external-auth/plugins';
import { openExternalAuthSecret } from '../external-auth/secret';
import { UserRepository } from '../user/repository';
import { createUserInDomain } from '../user/service';
import { databaseNowMs, lockForReading } from '../revocation/grant-locks';
import { findUserIgnoringCase } from '../ids';
import { authFailure, readGrant, type GrantInput, type GrantReads } from './grant';
import { DomainRepository } from '../domain/repository';
import { RoleBindingRepository } from '../role-binding/repository';
import { WorkspaceRepository } from '../workspace/repository';

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

/** At most this much JSON in the credentials sent to an external auth plugin. */
const MAX_PLUGIN_CREDENTIALS_BYTES = 16 * 1024;

const loginBlocked = (limit: number, seconds: number) =>
  errors.unauthenticated('ERROR_LOGIN_BLOCKED', `Login is blocked after ${limit} failed attempts; retry in at most ${seconds} seconds.`);

export class TokenService {
  private readonly rateLimits: IssueRateLimits;
  private readonly loginAttempts: AttemptCounter;
  private readonly mfaAttempts: AttemptCounter;
  private readonly oidc: OidcVerifier;
  /** The domain, user, bindings and workspace a login or a grant reads. */
  private readonly repos: GrantReads;

  constructor(private readonly deps: IdentityDeps) {
    const { config, redis } = deps;
    this.rateLimits = new IssueRateLimits(redis, deps.redisPrefix, config.issueRateLimit);
    // Settings are read per attempt, so a test (or a reload) can change them on a running service.
    this.loginAttempts = new AttemptCounter(redis, () => ({ limit: config.login.maxFailures, windowSeconds: config.login.blockSeconds }));
    this.mfaAttempts = new AttemptCounter(redis, () => ({ limit: config.login.mfaMaxFailures, windowSeconds: config.login.mfaBlockSeconds }));
    this.oidc = new OidcVerifier(() => config.externalAuth);
    this.repos = {
      domains: new DomainRepository(deps.prisma),
      users: new UserRepository(deps.prisma),
      bindings: new RoleBindingRepository(deps.prisma),
      workspaces: new WorkspaceRepository(deps.prisma, deps.pool),
    };
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
    const { redis, config } = this.deps;
    const [domain, user] = await Promise.all([
      this.repos.domains.find(input.domain_id),
      this.repos.users.find(input.domain_id, userId),
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
   * read again under the lock revoking changes take (revocation/grant-locks.ts): still enabled, the same
   * password (hash) and auth type that were checked, else the same 401 as any refusal; the tokens are
   * dated at that reading, so a disable or a new password that came after it ends them too.
   */
  private async userTokens(checked: { domain_id: string; user_id: string; password_hash: string; auth_type: string }, timeout: number | undefined) {
    const { prisma, config } = this.deps;
    const key = { domain_id: checked.domain_id, user_id: checked.user_id };
    const issuedAtMs = await prisma.$transaction(async (tx) => {
      await lockForReading(tx, key.domain_id, key.user_id);
      const users = new UserRepository(tx);
      const now = await users.find(key.domain_id, key.user_id);
      if (!now || now.state !== 'ENABLED' || now.password_hash !== checked.password_hash || now.auth_type !== checked.auth_type) throw authFailure();
      const at = await databaseNowMs(tx);
      await users.touch(tx, key.domain_id, key.user_id, new Date(at));
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
   * token/issue with auth_type EXTERNAL: the domain's external auth names the user, through a published
   * ExternalAuth plugin's authorize or the built-in OIDC (docs/decisions/identity.md, plugins.md). Every
   * refusal (a domain without external auth, a plugin's refusal of any kind) is the same 401, its reason
   * only in the log; a provider or plugin that cannot be asked is a 503. Once the user is known, the
   * per-user rate limit and the login lockout apply exactly as to a password.
   */
  private async issueExternal(input: IssueInput) {
    const { config, prisma, logger } = this.deps;
    const refuse = (reason: string, userId?: string) => {
      logger.warn({ domain_id: input.domain_id, ...(userId !== undefined && { user_id: userId }), reason }, 'external login refused');
      return authFailure();
    };
    // Whether a domain has SSO is not told to a caller without a token: the same 401 as any refusal (#27).
    const configured = await enabledExternalAuth(this.deps, input.domain_id);
    if (!configured) {
      externalToken(input.credentials); // a malformed request is still a 400
      throw refuse('external authentication is not configured for the domain');
    }
    let claimed: { userId: string; info?: Identity.UserInfo };
    const choice = await this.chooseExternal(configured);
    if (choice.kind === 'builtin') claimed = { userId: await this.oidcUser(input, configured) };
    else {
      const info = await this.pluginUser(input, configured, choice.endpoint, refuse);
      claimed = { userId: info.user_id, info };
    }
    // The name given names the user whose id it equals but for case (ids are unique ignoring case, #27):
    // 'Alice@Example.com' from the provider is 'alice@example.com' here, and shares its counts.
    const userId = (await findUserIgnoringCase(prisma, input.domain_id, claimed.userId)) ?? claimed.userId.toLowerCase();

    await this.rateLimits.consumeUser(input.domain_id, userId);
    const loginKey = this.key('login-attempts', input.domain_id, userId);
    if (!(await this.loginAttempts.begin(loginKey))) throw loginBlocked(config.login.maxFailures, config.login.blockSeconds);
    let tokens: { access_token: string; refresh_token: string };
    try {
      const domain = await this.repos.domains.find(input.domain_id);
      if (!domain || domain.state !== 'ENABLED') throw refuse('the domain is not enabled', userId);
      let user: { domain_id: string; user_id: string; password_hash: string; auth_type: string; state: string } | null = await this.repos.users.find(input.domain_id, userId);
      if (!user && claimed.info && configured.options.auto_user_sync === true) user = await this.createExternalUser(input.domain_id, userId, claimed.info, refuse);
      if (!user) throw refuse('no such user in the domain', userId);
      if (user.auth_type !== 'EXTERNAL') throw refuse(`the user's auth_type is ${user.auth_type}, not EXTERNAL`, userId);
      if (user.state !== 'ENABLED') throw refuse(`the user is ${user.state}`, userId);
      if (claimed.info?.state === 'DISABLED') throw refuse('the plugin answers the user as DISABLED', userId);
      tokens = await this.userTokens(user, input.timeout);
    } catch (e) {
      await this.loginAttempts.fail(loginKey);
      throw e;
    }
    await this.loginAttempts.succeed(loginKey);
    return tokens;
  }

  /**
   * The plugin serving the domain's external auth now (a version published since the auth was set
   * takes over at once, AUTO follows the newest). A published plugin withdrawn since, or a table that
   * cannot be read, is a 503: the operator's to fix, not the caller's credentials.
   */
  private async chooseExternal(configured: DomainExternalAuth) {
    try {
      return await chooseAuthPlugin(this.deps.plugins, {
        domainId: configured.domain_id,
        pluginId: configured.plugin_id,
        version: configured.version,
        upgradeMode: configured.upgrade_mode,
      });
    } catch (e) {
      // A stored configuration that no longer resolves (its plugin withdrawn, unreachable, or a row stored
      // before the one upgrade_mode rule, e.g. MANUAL without a version) is the service's failure at login,
      // never the caller's 4xx.
      if (!(e instanceof ApiError)) throw e;
      this.deps.logger.warn({ domain_id: configured.domain_id, plugin_id: configured.plugin_id, reason: e.message }, 'external login: the external auth plugin cannot be found');
      throw pluginErrors.unavailable('The external authentication plugin cannot be reached; try again later.');
    }
  }

  /** The built-in OIDC: the provider's token names the user by the configured claim. */
  private async oidcUser(input: IssueInput, configured: DomainExternalAuth): Promise<string> {
    const { logger } = this.deps;
    const token = externalToken(input.credentials);
    const refuse = (reason: string) => {
      logger.warn({ domain_id: input.domain_id, reason }, 'external login refused');
      return authFailure();
    };
    const settings = oidcSettingsOf(configured.options);
    if (!settings) throw refuse('the stored OIDC options are not usable');
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
    return claim;
  }

  /**
   * A published plugin: ExternalAuth.authorize with what upstream sends (credentials, options, the
   * opened secret_data, schema_id, metadata, domain_id). Any refusal of the plugin (whatever its gRPC
   * status, as upstream turns every failure into ERROR_INVALID_CREDENTIALS) is the 401 of every login
   * refusal; only a plugin that cannot be reached is a 503. The plugin's text, already stripped of the
   * secrets and credentials by libs/plugin, goes to the log only.
   */
  private async pluginUser(input: IssueInput, configured: DomainExternalAuth, endpoint: string, refuse: (reason: string) => ApiError): Promise<Identity.UserInfo> {
    const { logger, config, plugins } = this.deps;
    if (!Object.keys(input.credentials).length) throw errors.requiredParameter('credentials');
    if (Buffer.byteLength(JSON.stringify(input.credentials), 'utf8') > MAX_PLUGIN_CREDENTIALS_BYTES) {
      throw errors.invalidParameter('credentials', `at most ${MAX_PLUGIN_CREDENTIALS_BYTES} bytes as JSON`);
    }
    let info: Identity.UserInfo;
    try {
      info = await plugins!.clients.identity(endpoint, configured.plugin_id).externalAuth.authorize({
        options: configured.options,
        secret_data: openExternalAuthSecret(config.secretKeys, configured),
        credentials: input.credentials,
        schema_id: configured.schema_id,
        metadata: configured.metadata,
        domain_id: configured.domain_id,
      });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.status === 503) {
        logger.warn({ domain_id: input.domain_id, plugin_id: configured.plugin_id, reason: e.message }, 'external login: the external auth plugin cannot be reached');
        throw pluginErrors.unavailable('The external authentication plugin cannot be reached; try again later.');
      }
      // A value that cannot be sent (not JSON) is the caller's request to fix.
      if (e.status === 400 && e.code === 'ERROR_INVALID_PARAMETER' && !e.details?.grpcStatus) throw e;
      throw refuse(`the plugin refused: ${e.code} ${e.message}`);
    }
    if (!info.user_id || info.user_id.length > 255) throw refuse('the plugin answered no usable user_id');
    return info;
  }

  /**
   * upstream's first login (options.auto_user_sync): the user the plugin named is created, EXTERNAL,
   * with the plugin's name and email. Only for a user the plugin answers ENABLED (or without a state);
   * an id identity would not accept from an admin is refused as any login; a concurrent first login
   * of the same user finds the row the other made.
   */
  private async createExternalUser(domainId: string, userId: string, info: Identity.UserInfo, refuse: (reason: string, userId?: string) => ApiError) {
    if (info.state !== 'NONE' && info.state !== 'ENABLED') throw refuse(`the plugin answers the new user as ${String(info.state)}`, userId);
    const text = (v: string) => (v.length <= 255 && !UNSAFE_TEXT.test(v) ? v : '');
    try {
      const user = await createUserInDomain(this.deps.prisma, domainId, { user_id: userId, auth_type: 'EXTERNAL', name: text(info.name), email: text(info.email) });
      this.deps.logger.info({ domain_id: domainId, user_id: userId }, 'external login: user created on first login');
      return user;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'ERROR_ALREADY_EXISTS') {
        return this.repos.users.find(domainId, userId);
      }
      if (e instanceof ApiError && e.status === 400) throw refuse(`the plugin's user cannot be created: ${e.message}`, userId);
      throw e;
    }
  }

  /**
   * token/grant: the user, their bindings and the workspace are read under the lock their revoking
   * changes take (revocation/grant-locks.ts), and the token is dated at that reading.
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
      const role = await readGrant(tx, this.repos, claims, input);
      // The role's permissions, read under its lock (the last one taken): a disable or a change of
      // permissions either waits for this grant (whose token it then revokes: issue time <= T) or
      // came before it and is read here. A disabled role grants nothing.
      let rolePermissions = ['*'];
      if (role.roleId) {
        const r = await findRole(tx, domainId, role.roleId, { lock: true }).catch(() => undefined);
        if (!r || r.state !== 'ENABLED') throw errors.permissionDenied(`Role ${role.roleId} is disabled or gone; no token is granted with it.`);
        rolePermissions = grantedPermissions(r);
      }
      return { ...role, rolePermissions, issuedAtMs: await databaseNowMs(tx) };
    });
    const { roleType, roleId, workspaceId, rolePermissions } = read;

    // Requested permissions narrow the token to those the role covers (upstream's prefix match).
    const permissions = input.permissions?.length
      ? input.permissions.filter((p) => rolePermissions.some((rp) => permissionMatches(rp, p)))
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
