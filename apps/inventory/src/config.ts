import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt } from '@platform/core';

export interface InventoryConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  /** Base of the URLs handed out (the gateway's public URL): download URLs of exports start with it. */
  publicBaseUrl: string;
  migrateOnStart: boolean;
  export: {
    /** How long a download URL works. */
    urlTtlSeconds: number;
    /** Rows read from the database per round trip while an export streams. */
    batchSize: number;
    /** Downloads this process streams at once (each holds a database connection), per domain and per requester. */
    maxDownloads: number;
    maxDownloadsPerDomain: number;
    maxDownloadsPerUser: number;
    /** A download whose client takes fewer than `bytesPerSecond` over `windowMs` loses its connection and slot. */
    minRate: { bytesPerSecond: number; windowMs: number };
    /** Exports a requester may have pending (requested, URL not yet expired) at once. */
    maxPendingPerUser: number;
  };
}

export function loadConfig(): InventoryConfig {
  const maxDownloads = envInt('EXPORT_MAX_DOWNLOADS', 4);
  return {
    port: envInt('PORT', 8106),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('inventory')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    publicBaseUrl: env('PUBLIC_BASE_URL', 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    export: {
      urlTtlSeconds: envInt('EXPORT_URL_TTL_SECONDS', 3600),
      batchSize: envInt('EXPORT_BATCH_SIZE', 2000),
      maxDownloads,
      // Half the slots by default: one domain never holds them all (issue #32).
      maxDownloadsPerDomain: envInt('EXPORT_MAX_DOWNLOADS_PER_DOMAIN', Math.max(1, Math.floor(maxDownloads / 2))),
      maxDownloadsPerUser: envInt('EXPORT_MAX_DOWNLOADS_PER_USER', 2),
      minRate: { bytesPerSecond: envInt('EXPORT_MIN_RATE_BYTES_PER_SECOND', 16_384), windowMs: envInt('EXPORT_MIN_RATE_WINDOW_MS', 20_000) },
      maxPendingPerUser: envInt('EXPORT_MAX_PENDING_PER_USER', 100),
    },
  };
}
