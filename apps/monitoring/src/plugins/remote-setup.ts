import type IORedis from 'ioredis';
import type { Logger } from '@platform/core';
import { createPool } from '@platform/db';
import { PluginClients, pluginDatabaseUrl, tableSource, watchPluginEndpoints } from '@platform/plugin';
import type { RemotePlugins } from './remote';

/**
 * Published plugins for main.ts and worker.ts: a small pool on the plugin module's database (the
 * endpoint table; PLUGIN_DATABASE_URL, else platform_plugin on monitoring's own server), the resolver
 * watching `plugin:endpoints` on `redis`, and the gRPC clients. `close()` at shutdown.
 */
export function startRemotePlugins(databaseUrl: string, redis: IORedis, logger: Logger): { plugins: RemotePlugins; close(): Promise<void> } {
  const pool = createPool(pluginDatabaseUrl(process.env, databaseUrl), { logger, max: 2 });
  const resolver = watchPluginEndpoints(redis, tableSource(pool), logger);
  const clients = new PluginClients();
  return {
    plugins: { resolver, clients },
    async close() {
      resolver.stop();
      clients.close();
      await pool.end().catch(() => {});
    },
  };
}
