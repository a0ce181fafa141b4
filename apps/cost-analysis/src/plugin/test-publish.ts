import type { Pool } from 'pg';
import { EndpointChanges } from '@platform/plugin';
import type Redis from 'ioredis';

/**
 * For tests and benchmarks that run without the plugin app: writes what a supervisor's publish writes
 * into the plugin module's table (platform_plugin, made with the plugin app's migrations) and announces
 * the change on the channel every resolver listens to, as apps/plugin's publish does. `plugins` replaces
 * what `hostname` published before, as a publish does.
 */
export async function publishPlugins(
  pool: Pool,
  redis: Redis,
  prefix: string,
  domainId: string,
  hostname: string,
  plugins: { plugin_id: string; version: string; endpoint: string }[],
): Promise<void> {
  const supervisorId = `supervisor-${hostname}`;
  await pool.query(
    `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ($1, $2, $3, $3, '') ON CONFLICT (supervisor_id) DO NOTHING`,
    [domainId, supervisorId, hostname],
  );
  await pool.query(`DELETE FROM installed_plugin WHERE supervisor_id = $1`, [supervisorId]);
  for (const p of plugins) {
    await pool.query(
      `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
       VALUES ($1, $2, $3, $3, $4, $5, 'ACTIVE', $6, $1 || ' ' || $4 || ' ' || $5)`,
      [supervisorId, domainId, hostname, p.plugin_id, p.version, p.endpoint],
    );
  }
  await new EndpointChanges(redis, prefix).announce({ domainId, pluginIds: null });
}
