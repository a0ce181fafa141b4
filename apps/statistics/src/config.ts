import { defaultDatabaseUrl, env, envBool, envInt, MODULES } from '@platform/core';
import { loadSecretKeys } from '@platform/secrets';
import { outboundPolicyFromEnv, type OutboundPolicy } from '@platform/net';

export interface StatisticsConfig {
  port: number;
  databaseUrl: string;
  migrateOnStart: boolean;
  /** AES-256-GCM keys for storage secrets: the first encrypts, every one decrypts (rotation). */
  secretKeys: Buffer[];
  /** The private hosts and networks a plugin may reach (OUTBOUND_ALLOW_PRIVATE; none by default: SSRF). */
  outbound: OutboundPolicy;
  /** Time limit of a plugin's verify (connect + probe), in milliseconds. */
  verifyTimeoutMs: number;
}

export function loadConfig(): StatisticsConfig {
  return {
    port: envInt('PORT', MODULES.statistics.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('statistics')),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    secretKeys: loadSecretKeys(),
    outbound: outboundPolicyFromEnv(),
    verifyTimeoutMs: envInt('STORAGE_VERIFY_TIMEOUT_MS', 5000),
  };
}
