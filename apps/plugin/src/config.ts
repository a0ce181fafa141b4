import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt, MODULES } from '@platform/core';

export interface PluginConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  migrateOnStart: boolean;
  /**
   * The operator's domain (PLUGIN_PUBLIC_SUPERVISOR_DOMAIN_ID): only a DOMAIN_ADMIN of this domain may
   * publish a public supervisor (`is_public`, plugins for every domain). Unset: no public supervisor
   * can be published (docs/decisions/plugins.md "Publish").
   */
  publicSupervisorDomainId: string;
}

export function loadConfig(): PluginConfig {
  return {
    port: envInt('PORT', MODULES.plugin.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('plugin')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    publicSupervisorDomainId: (process.env.PLUGIN_PUBLIC_SUPERVISOR_DOMAIN_ID ?? '').trim(),
  };
}
