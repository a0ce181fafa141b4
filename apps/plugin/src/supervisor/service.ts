import type { PoolClient } from 'pg';
import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { EndpointTurns, parseEndpoint, pickEndpoint, type UpgradeMode } from '@platform/plugin';
import { applyOnly, eqConditions, resolveOnly, runList, type Condition, type Query } from '@platform/query';
import type { PluginDeps } from '../deps';
import { pluginResource, supervisorResource } from './fields';
import { SupervisorRepository, type PluginRow, type PublishedPlugin, type SupervisorRow } from './repository';
import { toPluginInfo, toSupervisorInfo } from './responses';
import { digestSecret, secretMatches } from './secret';

export interface PublishInput {
  name: string;
  hostname: string;
  secret_key: string;
  plugin_info: PublishedPlugin[];
  is_public: boolean;
  labels: string[];
  tags: Record<string, unknown>;
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
  private readonly supervisors: SupervisorRepository;
  private readonly turns = new EndpointTurns();

  constructor(private readonly deps: PluginDeps) {
    this.supervisors = new SupervisorRepository(deps.prisma, deps.pool);
  }

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
    const { supervisor, before, wasPublic } = await this.supervisors.inTransaction((c) => this.write(c, domainId, input, plugins));
    const ids = [...before, ...plugins.map((p) => p.plugin_id)];
    await this.announce(wasPublic || supervisor.is_public ? null : domainId, ids);
    this.deps.logger.info({ supervisor_id: supervisor.supervisor_id, hostname: supervisor.hostname, plugins: plugins.length }, 'supervisor published');
    return toSupervisorInfo(supervisor);
  }

  private async write(c: PoolClient, domainId: string, input: PublishInput, plugins: PublishedPlugin[]) {
    // The hostname's supervisor, locked; or a new one; or (undefined: a concurrent publish created it
    // since our look-up) that one, which this statement sees committed. An existing one needs its key.
    const existing = (await this.supervisors.lockedByHostname(c, domainId, input.hostname)) ?? (await this.insert(c, domainId, input)) ?? (await this.supervisors.lockedByHostname(c, domainId, input.hostname));
    if (!existing) throw errors.conflict('ERROR_ALREADY_EXISTS', `The supervisor on ${input.hostname} changed meanwhile; publish again.`);
    const wasPublic = existing.is_public;
    const row = 'created' in existing ? existing : await this.update(c, existing, input);
    const before = await this.supervisors.replacePlugins(c, row, plugins);
    return { supervisor: row, before, wasPublic };
  }

  /** A new supervisor (its secret kept as a digest); undefined when one on this hostname was created meanwhile. */
  private async insert(c: PoolClient, domainId: string, input: PublishInput): Promise<(SupervisorRow & { created: true }) | undefined> {
    const row = await this.supervisors.insert(c, domainId, input, await digestSecret(input.secret_key));
    return row && { ...row, created: true };
  }

  /** A later publish from the same hostname: only with the secret_key it was first published with. */
  private async update(c: PoolClient, row: SupervisorRow, input: PublishInput): Promise<SupervisorRow> {
    if (!(await secretMatches(input.secret_key, row.secret_digest))) {
      throw errors.permissionDenied(`The secret_key does not match the one supervisor ${row.supervisor_id} was published with.`);
    }
    return this.supervisors.update(c, row.supervisor_id, input);
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
    const row = await this.supervisors.find(domainOf(auth), supervisorId);
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
    const gone = await this.supervisors.delete(domainOf(auth), supervisorId);
    if (!gone) throw errors.notFound('supervisor_id', supervisorId);
    await this.announce(gone.is_public ? null : auth.domainId, gone.ids);
    this.deps.logger.info({ supervisor_id: supervisorId }, 'supervisor deregistered');
    return {};
  }

  /** Where a plugin answers for the caller's domain (the primary: a publish is seen at once). */
  async endpoint(auth: AuthContext, input: { plugin_id: string; version?: string; upgrade_mode?: UpgradeMode }) {
    const version = input.version ?? '';
    const mode: UpgradeMode = input.upgrade_mode ?? (version ? 'MANUAL' : 'AUTO');
    if (mode === 'MANUAL' && !version) throw errors.invalidParameter('version', 'MANUAL needs the version');
    const picked = pickEndpoint(await this.supervisors.candidates(domainOf(auth), input.plugin_id), version, mode);
    if (!picked) throw errors.notFound('plugin_id', mode === 'MANUAL' ? `${input.plugin_id} ${version}` : input.plugin_id);
    // upstream's round robin over the version's endpoints, per replica of this app
    const endpoint = this.turns.take(`${domainOf(auth)}\0${input.plugin_id}\0${picked.version}`, picked.endpoints);
    return { endpoint, updated_version: picked.updated_version };
  }
}
