import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt } from '@platform/core';

export interface IdentityConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  publicBaseUrl: string;
  migrateOnStart: boolean;
  bootstrap: { domainId: string; workspaceId: string; userId: string; password?: string };
  token: { accessDefault: number; accessMax: number; refreshTimeout: number };
  login: { maxFailures: number; blockSeconds: number; mfaPendingSeconds: number };
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
    },
  };
}
