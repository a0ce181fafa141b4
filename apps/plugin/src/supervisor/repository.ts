import type { Pool, PoolClient } from 'pg';
import { generateId } from '@platform/core';
import { tableSource } from '@platform/plugin';
import type { PrismaClient } from '../generated/prisma/client';

/** A `supervisor` row as stored (secret_digest never leaves the service). */
export interface SupervisorRow {
  domain_id: string;
  supervisor_id: string;
  name: string;
  hostname: string;
  is_public: boolean;
  secret_digest: string;
  labels: unknown;
  tags: unknown;
  created_at: Date;
  updated_at: Date;
}

/** An `installed_plugin` row as stored. */
export interface PluginRow {
  supervisor_id: string;
  domain_id: string;
  is_public: boolean;
  supervisor_name: string;
  hostname: string;
  plugin_id: string;
  version: string;
  state: string;
  endpoint: string;
  endpoints: unknown;
  created_at: Date;
  updated_at: Date;
}

/** A plugin version as a supervisor publishes it (endpoints normalised). */
export interface PublishedPlugin {
  plugin_id: string;
  version: string;
  state: string;
  endpoint: string;
  endpoints: string[];
}

/** What a supervisor is stored with at a publish. */
export interface SupervisorFields {
  name: string;
  hostname: string;
  is_public: boolean;
  labels: string[];
  tags: Record<string, unknown>;
}

/** Every read and write of the `supervisor` and `installed_plugin` tables (list reads go through fields.ts). */
export class SupervisorRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  /** Runs fn in one transaction on one connection; rolls back when it throws. */
  async inTransaction<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }

  /** The hostname's supervisor in the domain, locked for the transaction. */
  async lockedByHostname(c: PoolClient, domainId: string, hostname: string): Promise<SupervisorRow | undefined> {
    const { rows } = await c.query<SupervisorRow>('SELECT * FROM supervisor WHERE domain_id = $1 AND hostname = $2 FOR UPDATE', [domainId, hostname]);
    return rows[0];
  }

  /** A new supervisor; undefined when one on this hostname was created meanwhile. */
  async insert(c: PoolClient, domainId: string, s: SupervisorFields, secretDigest: string): Promise<SupervisorRow | undefined> {
    const { rows } = await c.query<SupervisorRow>(
      `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, is_public, secret_digest, labels, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb) ON CONFLICT (domain_id, hostname) DO NOTHING RETURNING *`,
      [domainId, generateId('supervisor'), s.name, s.hostname, s.is_public, secretDigest, JSON.stringify(s.labels), JSON.stringify(s.tags)],
    );
    return rows[0];
  }

  async update(c: PoolClient, supervisorId: string, s: SupervisorFields): Promise<SupervisorRow> {
    const { rows } = await c.query<SupervisorRow>(
      `UPDATE supervisor SET name = $2, is_public = $3, labels = $4::jsonb, tags = $5::jsonb, updated_at = now() WHERE supervisor_id = $1 RETURNING *`,
      [supervisorId, s.name, s.is_public, JSON.stringify(s.labels), JSON.stringify(s.tags)],
    );
    return rows[0];
  }

  /** Replaces the supervisor's plugin list; answers the plugin ids it had before. */
  async replacePlugins(c: PoolClient, row: SupervisorRow, plugins: PublishedPlugin[]): Promise<string[]> {
    const before = (await c.query<{ plugin_id: string }>('DELETE FROM installed_plugin WHERE supervisor_id = $1 RETURNING plugin_id', [row.supervisor_id])).rows.map((r) => r.plugin_id);
    if (plugins.length) {
      await c.query(
        `INSERT INTO installed_plugin (supervisor_id, domain_id, is_public, supervisor_name, hostname, plugin_id, version, state, endpoint, endpoints, plugin_key)
         SELECT $1, $2, $3, $4, $5, x.plugin_id, x.version, x.state, x.endpoint, x.endpoints, $1 || ' ' || x.plugin_id || ' ' || x.version
           FROM jsonb_to_recordset($6::jsonb) AS x(plugin_id text, version text, state text, endpoint text, endpoints jsonb)`,
        [row.supervisor_id, row.domain_id, row.is_public, row.name, row.hostname, JSON.stringify(plugins)],
      );
    }
    return before;
  }

  find(domainId: string, supervisorId: string): Promise<SupervisorRow | null> {
    return this.prisma.supervisor.findFirst({ where: { supervisor_id: supervisorId, domain_id: domainId } });
  }

  /** Deletes the supervisor (its plugins go with it); undefined when the domain has none by that id. */
  async delete(domainId: string, supervisorId: string): Promise<{ is_public: boolean; ids: string[] } | undefined> {
    const { rows } = await this.pool.query<{ is_public: boolean; ids: string[] | null }>(
      `WITH p AS (SELECT plugin_id FROM installed_plugin WHERE supervisor_id = $1),
            d AS (DELETE FROM supervisor WHERE supervisor_id = $1 AND domain_id = $2 RETURNING is_public)
       SELECT d.is_public, (SELECT array_agg(DISTINCT plugin_id) FROM p) AS ids FROM d`,
      [supervisorId, domainId],
    );
    return rows[0] && { is_public: rows[0].is_public, ids: rows[0].ids ?? [] };
  }

  /** The published versions of a plugin the domain may use (libs/plugin's table source). */
  candidates(domainId: string, pluginId: string) {
    return tableSource(this.pool).candidates(domainId, pluginId);
  }
}
