import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt, MODULES } from '@platform/core';

export interface OpsflowConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  migrateOnStart: boolean;
  /**
   * Service tokens that may record events (`POST /opsflow/v1/event/create`), from OPSFLOW_INGEST_TOKENS
   * (comma-separated, so a token can be rotated without downtime). None: ingestion is off.
   */
  ingestTokens: string[];
}

export function loadConfig(): OpsflowConfig {
  return {
    port: envInt('PORT', MODULES.opsflow.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('opsflow')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    ingestTokens: (process.env.OPSFLOW_INGEST_TOKENS ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  };
}
