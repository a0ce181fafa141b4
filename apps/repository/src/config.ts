import { defaultDatabaseUrl, env, envBool, envInt, MODULES } from '@platform/core';
import { outboundPolicyFromEnv, type OutboundPolicy } from '@platform/net';

export interface RepositoryConfig {
  port: number;
  databaseUrl: string;
  migrateOnStart: boolean;
  sync: {
    /** The private hosts and networks a sync may fetch from (OUTBOUND_ALLOW_PRIVATE; none by default: SSRF). */
    outbound: OutboundPolicy;
    /** Time limit of one fetch (connect, redirects and body), in milliseconds. */
    timeoutMs: number;
    /** Largest schema document a sync accepts, in bytes. */
    maxBytes: number;
    maxRedirects: number;
    /** An AUTOMATIC schema is synced again this long after its last attempt. */
    intervalSeconds: number;
    /** How often the app looks for AUTOMATIC schemas that are due (0 turns automatic sync off). */
    sweepSeconds: number;
  };
}

export function loadConfig(): RepositoryConfig {
  return {
    port: envInt('PORT', MODULES.repository.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('repository')),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    sync: {
      outbound: outboundPolicyFromEnv(),
      timeoutMs: envInt('SCHEMA_SYNC_TIMEOUT_MS', 10_000),
      maxBytes: envInt('SCHEMA_SYNC_MAX_BYTES', 1024 * 1024),
      maxRedirects: envInt('SCHEMA_SYNC_MAX_REDIRECTS', 3),
      intervalSeconds: envInt('SCHEMA_SYNC_INTERVAL_SECONDS', 3600),
      sweepSeconds: envInt('SCHEMA_SYNC_SWEEP_SECONDS', 60),
    },
  };
}
