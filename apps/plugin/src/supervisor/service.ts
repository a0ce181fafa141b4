import type { PoolClient } from 'pg';
import type { AuthContext } from '@platform/auth';
import { generateId, isoOrEmpty } from '@platform/core';
import { errors } from '@platform/errors';
import { EndpointTurns, parseEndpoint, pickEndpoint, tableSource, type UpgradeMode } from '@platform/plugin';
import { applyOnly, eqConditions, resolveOnly, runList, type Condition, type Query } from '@platform/query';
import type { PluginDeps } from '../deps';
import { pluginResource, supervisorResource, type PluginRow, type SupervisorRow } from './repository';
import { digestSecret, secretMatches } from './secret';

export interface PublishedPlugin {
  plugin_id: string;
  version: string;
  state: string;
  endpoint: string;
  endpoints: string[];
}

export interface PublishInput {
  name: string;
  hostname: string;
  secret_key: string;
  plugin_info: PublishedPlugin[];
  is_public: boolean;
  labels: string[];
  tags: Record<string, unknown>;
}

export function toSupervisorInfo(r: SupervisorRow) {
  return {
    supervisor_id: r.supervisor_id,
    name: r.name,
    hostname: r.hostname,
    state: 'ENABLED' as const,
    is_public: r.is_public,
    labels: (r.labels ?? []) as string[],
    tags: (r.tags ?? {}) as Record<string, unknown>,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
  };
}

export function toPluginInfo(r: PluginRow) {
  return {
    plugin_id: r.plugin_id,
    version: r.version,
    state: r.state,
    endpoint: r.endpoint,
    endpoints: (r.endpoints ?? []) as string[],
    managed: false,
    domain_id: r.domain_id,
    supervisor_id: r.supervisor_id,
    supervisor_name: r.supervisor_name,
  };
}

/** Publishes, reads and deregisters only in the caller's own domain, with a domain-scoped token. */
function domainOf(auth: AuthContext): string {
  if (auth.scope !== 'DOMAIN') throw errors.permissionDenied('Supervisors and plugin endpoints take a domain-scoped DOMAIN_ADMIN token.');
  return auth.domainId;
}

/**
 * Normalises every endpoint (libs/plugin parseEndpoint: grpc:// or grpcs:// with a host and a port,
 * nothing else) and refuses a version published twice and an ACTIVE version without an endpoint.
 */
export function checkPlugins(plugins: PublishedPlugin[]): PublishedPlugin[] {
  const seen = new Set<string>();
  return plugins.map((p, i) => {
    const key = `${p.plugin_id}\0${p.version}`;
    if (seen.has(key)) throw errors.invalidParameter(`plugin_info[${i}]`, `${p.plugin_id} ${p.version} is published twice`);
    seen.add(key);
    if (p.state === 'ACTIVE' && !p.endpoint) throw errors.invalidParameter(`plugin_info[${i}].endpoint`, 'an ACTIVE plugin needs an endpoint');
    const norm = (raw: string, field: string) => {
      try {
        return parseEndpoint(raw).url;
      } catch (err) {
        throw errors.invalidParameter(field, (err as Error).message);
      }
    };
    return {
      plugin_id: p.plugin_id,
      version: p.version,
      state: p.state,
      endpoint: p.endpoint ? norm(p.endpoint, `plugin_info[${i}].endpoint`) : '',
      endpoints: p.endpoints.map((e, j) => norm(e, `plugin_info[${i}].endpoints[${j}]`)),
    };
  });
}

export class SupervisorService {
  private readonly turns = new EndpointTurns();

  constructor(private readonly deps: PluginDeps) {}

  /**
   * Records where a supervisor's plugin containers answer: the supervisor (one per domain and
   * hostname) and its whole plugin list, replacing the one it published before, in one transaction.
   * A later publish from the same hostname must present the same secret_key. Then every resolver is
   * told (at once, through Redis) to forget the endpoints of the plugins named before and now.
   */
  async publish(auth: AuthContext, input: PublishInput) {
    const domainId = domainOf(auth);
    if (input.is_public && (!this.deps.config.publicSupervisorDomainId || domainId !== this.deps.config.publicSupervisorDomainId)) {
      throw errors.permissionDenied('Only the operator’s domain (PLUGIN_PUBLIC_SUPERVISOR_DOMAIN_ID) publishes a public supervisor.');
    }
    const plugins = checkPlugins(input.plugin_info);
    const { supervisor, before, wasPublic } = await this.inTransaction((c) => this.write(c, domainId, input, plugins));
    const ids = [...before, ...plugins.map((p) => p.plugin_id)];
    await this.announce(wasPublic || supervisor.is_public ? null : domainId, ids);
    this.deps.logger.info({ supervisor_id: supervisor.supervisor_id, hostname: supervisor.hostname, plugins: plugins.length }, 'supervisor published');
    return toSupervisorInfo(supervisor);
  }

  private async write(c: PoolClient, domainId: string, input: PublishInput, plugins: PublishedPlugin[]) {
    // The hostname's supervisor, locked; or a new one; or (undefined: a concurrent publish created it
    // since our look-up) that one, which this statement sees committed. An existing one needs its key.
    const existing = (await this.lockedSupervisor(c, domainId, input.hostname)) ?? (await this.insert(c, domainId, input)) ?? (await this.lockedSupervisor(c, domainId, input.hostname));
    if (!existing) throw errors.conflict('ERROR_ALREADY_EXISTS', `The supervisor on ${input.hostname} changed meanwhile; publish again.`);
    const wasPublic = existing.is_public;
    const row = 'created' in existing ? existing : await this.update(c, existing, input);
    const before = (await c.query<{ plugin_id: string }>('DELETE FROM installed_plugin WHERE supervisor_id = $1 RETURNING plugin_id', [row.supervisor_id])).rows.map((r) => r.plugin_id);
    if (plugins.length) {
      await c.query(
        `INSERT INTO installed_plugin (supervisor_id, domain_id, is_public, supervisor_name, hostname, plugin_id, version, state, endpoint, endpoints, plugin_key)
         SELECT $1, $2, $3, $4, $5, x.plugin_id, x.version, x.state, x.endpoint, x.endpoints, $1 || ' ' || x.plugin_id || ' ' || x.version
           FROM jsonb_to_recordset($6::jsonb) AS x(plugin_id text, version text, state text, endpoint text, endpoints jsonb)`,
        [row.supervisor_id, domainId, row.is_public, row.name, row.hostname, JSON.stringify(plugins)],
      );
    }
    return { supervisor: row, before, wasPublic };
  }

  /** A new supervisor (its secret kept as a digest); undefined when one on this hostname was created meanwhile. */
  private async insert(c: PoolClient, domainId: string, input: PublishInput): Promise<(SupervisorRow & { created: true }) | undefined> {
    const digest = await digestSecret(input.secret_key);
    const { rows } = await c.query<SupervisorRow>(
      `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, is_public, secret_digest, labels, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb) ON CONFLICT (domain_id, hostname) DO NOTHING RETURNING *`,
      [domainId, generateId('supervisor'), input.name, input.hostname, input.is_public, digest, JSON.stringify(input.labels), JSON.stringify(input.tags)],
    );
    return rows[0] && { ...rows[0], created: true };
  }

  /** A later publish from the same hostname: only with the secret_key it was first published with. */
  private async update(c: PoolClient, row: SupervisorRow, input: PublishInput): Promise<SupervisorRow> {
    if (!(await secretMatches(input.secret_key, row.secret_digest))) {
      throw errors.permissionDenied(`The secret_key does not match the one supervisor ${row.supervisor_id} was published with.`);
    }
    const { rows } = await c.query<SupervisorRow>(
      `UPDATE supervisor SET name = $2, is_public = $3, labels = $4::jsonb, tags = $5::jsonb, updated_at = now() WHERE supervisor_id = $1 RETURNING *`,
      [row.supervisor_id, input.name, input.is_public, JSON.stringify(input.labels), JSON.stringify(input.tags)],
    );
    return rows[0];
  }

  private async lockedSupervisor(c: PoolClient, domainId: string, hostname: string) {
    const { rows } = await c.query<SupervisorRow>('SELECT * FROM supervisor WHERE domain_id = $1 AND hostname = $2 FOR UPDATE', [domainId, hostname]);
    return rows[0];
  }

  private async inTransaction<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.deps.pool.connect();
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

  /**
   * Tells every resolver. The change is committed already; when Redis cannot carry the message the
   * caller gets a 503 and publishes again (idempotent). Resolvers that lost Redis too have dropped
   * their caches by themselves.
   */
  private async announce(domainId: string | null, pluginIds: string[]) {
    await this.deps.changes.announce({ domainId, pluginIds }).catch((err: Error) => {
      this.deps.logger.warn({ err: err.message }, 'plugin endpoint change not announced');
      throw errors.unavailable('The change was recorded but could not be announced to the other modules; publish again.');
    });
  }

  async get(auth: AuthContext, supervisorId: string) {
    const row = await this.deps.prisma.supervisor.findFirst({ where: { supervisor_id: supervisorId, domain_id: domainOf(auth) } });
    if (!row) throw errors.notFound('supervisor_id', supervisorId);
    return toSupervisorInfo(row);
  }

  async list(auth: AuthContext, input: { query?: Query; supervisor_id?: string; name?: string; is_public?: boolean }) {
    const scope: Condition[] = [{ key: 'domain_id', value: domainOf(auth), operator: 'eq' }, ...eqConditions(input, ['supervisor_id', 'name', 'is_public'])];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), supervisorResource, input.query, scope);
    const only = resolveOnly(supervisorResource, input.query);
    return { results: rows.map((r) => applyOnly(toSupervisorInfo(r as SupervisorRow), only)), total_count };
  }

  async listPlugins(auth: AuthContext, input: { query?: Query } & Partial<Record<'supervisor_id' | 'hostname' | 'plugin_id' | 'version' | 'state' | 'endpoint', string>>) {
    const scope: Condition[] = [
      { key: 'domain_id', value: domainOf(auth), operator: 'eq' },
      ...eqConditions(input, ['supervisor_id', 'hostname', 'plugin_id', 'version', 'state', 'endpoint']),
    ];
    const query: Query = { ...input.query, sort: input.query?.sort?.length ? input.query.sort : [{ key: 'plugin_id' }, { key: 'version' }] };
    const { rows, total_count } = await runList(this.deps.reads.for(auth), pluginResource, query, scope);
    const only = resolveOnly(pluginResource, input.query);
    return { results: rows.map((r) => applyOnly(toPluginInfo(r as PluginRow), only)), total_count };
  }

  /** Removes the supervisor and its plugins; every resolver forgets their endpoints at once. */
  async deregister(auth: AuthContext, supervisorId: string) {
    const { rows } = await this.deps.pool.query<{ is_public: boolean; ids: string[] | null }>(
      `WITH p AS (SELECT plugin_id FROM installed_plugin WHERE supervisor_id = $1),
            d AS (DELETE FROM supervisor WHERE supervisor_id = $1 AND domain_id = $2 RETURNING is_public)
       SELECT d.is_public, (SELECT array_agg(DISTINCT plugin_id) FROM p) AS ids FROM d`,
      [supervisorId, domainOf(auth)],
    );
    if (!rows[0]) throw errors.notFound('supervisor_id', supervisorId);
    await this.announce(rows[0].is_public ? null : auth.domainId, rows[0].ids ?? []);
    this.deps.logger.info({ supervisor_id: supervisorId }, 'supervisor deregistered');
    return {};
  }

  /** Where a plugin answers for the caller's domain (the primary: a publish is seen at once). */
  async endpoint(auth: AuthContext, input: { plugin_id: string; version?: string; upgrade_mode?: UpgradeMode }) {
    const version = input.version ?? '';
    const mode: UpgradeMode = input.upgrade_mode ?? (version ? 'MANUAL' : 'AUTO');
    if (mode === 'MANUAL' && !version) throw errors.invalidParameter('version', 'MANUAL needs the version');
    const picked = pickEndpoint(await tableSource(this.deps.pool).candidates(domainOf(auth), input.plugin_id), version, mode);
    if (!picked) throw errors.notFound('plugin_id', mode === 'MANUAL' ? `${input.plugin_id} ${version}` : input.plugin_id);
    // upstream's round robin over the version's endpoints, per replica of this app
    const endpoint = this.turns.take(`${domainOf(auth)}\0${input.plugin_id}\0${picked.version}`, picked.endpoints);
    return { endpoint, updated_version: picked.updated_version };
  }
}
