import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt } from '@platform/core';
import { outboundPolicyFromEnv, type OutboundPolicy } from '@platform/net';
import { loadSecretKeys } from '@platform/secrets';

export interface IdentityConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  publicBaseUrl: string;
  migrateOnStart: boolean;
  bootstrap: { domainId: string; workspaceId: string; userId: string; password?: string };
  token: { accessDefault: number; accessMax: number; refreshTimeout: number };
  login: { maxFailures: number; blockSeconds: number; mfaPendingSeconds: number; mfaMaxFailures: number; mfaBlockSeconds: number };
  /** AES-256-GCM keys sealing users' MFA secrets: the first seals, every one opens (rotation). */
  secretKeys: Buffer[];
  /** Requests to token/issue per caller address and per (domain_id, user_id); `points` 0 turns a limit off. */
  issueRateLimit: { perAddress: RateLimitSetting; perUser: RateLimitSetting };
  /** External authentication (OIDC, external-auth/set): how identity talks to a domain's issuer. */
  externalAuth: ExternalAuthConfig;
}

export interface ExternalAuthConfig {
  /**
   * The private hosts and networks an issuer (and its JWKS and userinfo URLs) may be on
   * (OUTBOUND_ALLOW_PRIVATE); an issuer outside it must be https.
   */
  outbound: OutboundPolicy;
  /** Bound of each exchange with an issuer (discovery, JWKS, userinfo); past it a login answers 503. */
  timeoutMs: number;
  /** How long an issuer's discovery document and JWKS are kept before they are fetched again. */
  cacheSeconds: number;
  /** A token with an unknown `kid` refetches the JWKS only if it was fetched longer ago than this. */
  jwksCooldownSeconds: number;
  /** Tolerance on `exp` and `nbf` of a provider's JWT. */
  clockSkewSeconds: number;
}

export interface RateLimitSetting {
  points: number;
  seconds: number;
}

function rateLimit(name: string, points: number, seconds: number): RateLimitSetting {
  const setting = { points: envInt(`${name}_POINTS`, points), seconds: envInt(`${name}_SECONDS`, seconds) };
  if (setting.points < 0) throw new Error(`environment variable ${name}_POINTS must be 0 (off) or more`);
  if (setting.seconds < 1) throw new Error(`environment variable ${name}_SECONDS must be 1 or more`);
  return setting;
}

export function loadConfig(): IdentityConfig {
  return {
    port: envInt('PORT', 8101),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('identity')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    publicBaseUrl: env('PUBLIC_BASE_URL', 'http://127.0.0.1:8080'),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    bootstrap: {
      domainId: env('BOOTSTRAP_DOMAIN_ID', 'domain-local'),
      workspaceId: env('BOOTSTRAP_WORKSPACE_ID', 'workspace-local'),
      userId: env('BOOTSTRAP_USER_ID', 'admin'),
      password: process.env.BOOTSTRAP_PASSWORD || undefined,
    },
    token: {
      accessDefault: envInt('TOKEN_ACCESS_TIMEOUT', 1800),
      accessMax: envInt('TOKEN_ACCESS_TIMEOUT_MAX', 604800),
      refreshTimeout: envInt('TOKEN_REFRESH_TIMEOUT', 10800),
    },
    login: {
      maxFailures: envInt('LOGIN_MAX_FAILURES', 10),
      blockSeconds: envInt('LOGIN_BLOCK_SECONDS', 300),
      mfaPendingSeconds: envInt('MFA_PENDING_SECONDS', 300),
      mfaMaxFailures: envInt('MFA_MAX_FAILURES', 5),
      mfaBlockSeconds: envInt('MFA_BLOCK_SECONDS', 900),
    },
    issueRateLimit: {
      perAddress: rateLimit('TOKEN_ISSUE_RATE_ADDRESS', 60, 60),
      perUser: rateLimit('TOKEN_ISSUE_RATE_USER', 20, 60),
    },
    secretKeys: loadSecretKeys(),
    externalAuth: {
      outbound: outboundPolicyFromEnv(),
      timeoutMs: envInt('EXTERNAL_AUTH_TIMEOUT_MS', 5000),
      cacheSeconds: envInt('EXTERNAL_AUTH_CACHE_SECONDS', 600),
      jwksCooldownSeconds: envInt('EXTERNAL_AUTH_JWKS_COOLDOWN_SECONDS', 30),
      clockSkewSeconds: 30,
    },
  };
}
