import { defaultDatabaseUrl, env, envBool, envInt, MODULES } from '@platform/core';
import { loadSecretKeys } from '@platform/secrets';

export interface StatisticsConfig {
  port: number;
  databaseUrl: string;
  migrateOnStart: boolean;
  /** AES-256-GCM keys for storage secrets: the first encrypts, every one decrypts (rotation). */
  secretKeys: Buffer[];
  /** Plugins may reach private, loopback and link-local addresses (off by default: SSRF). */
  allowPrivateHosts: boolean;
  /** Time limit of a plugin's verify (connect + probe), in milliseconds. */
  verifyTimeoutMs: number;
}

export function loadConfig(): StatisticsConfig {
  return {
    port: envInt('PORT', MODULES.statistics.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('statistics')),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    secretKeys: loadSecretKeys(),
    allowPrivateHosts: envBool('STORAGE_ALLOW_PRIVATE_HOSTS', false),
    verifyTimeoutMs: envInt('STORAGE_VERIFY_TIMEOUT_MS', 5000),
  };
}
