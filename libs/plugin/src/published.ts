import type Redis from 'ioredis';
import type { Logger } from '@platform/core';
import { createPool } from '@platform/db';
import { PluginClients } from './clients';
import { tableSource, watchPluginEndpoints, type PluginEndpointResolver } from './resolver';

/** Where a process finds and calls published plugins. */
export interface PublishedPlugins {
  resolver: PluginEndpointResolver;
  clients: PluginClients;
  /** Stops the resolver, closes the channels and the pool (at shutdown). */
  close(): Promise<void>;
}

/**
 * What a module's main or worker makes once (docs/decisions/plugins.md): a small pool of its own on
 * the plugin module's database (`databaseUrl`, from pluginDatabaseUrl: one indexed read per cache
 * miss), the resolver watching `plugin:endpoints` on `redis`, and the gRPC clients. Nothing connects
 * before its first use: a process with no published plugin pays nothing.
 */
export function startPublishedPlugins(databaseUrl: string, redis: Redis, logger: Logger): PublishedPlugins {
  const pool = createPool(databaseUrl, { logger, max: 2 });
  const resolver = watchPluginEndpoints(redis, tableSource(pool), logger);
  const clients = new PluginClients();
  return {
    resolver,
    clients,
    async close() {
      resolver.stop();
      clients.close();
      await pool.end().catch(() => {});
    },
  };
}
