import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { MonitoringDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import { dataSourcePlugins } from '../plugins/data-source';
import type { PluginInfoInput, StoredPluginInfo } from '../plugins/plugin-info';
import { monitoringClient, resolveChosenPluginInfo } from '../plugins/remote';
import type { Struct, UpgradeMode } from '../plugins/registry';
import { equalsFilters } from '../scope';
import { dataSourceResource } from './fields';
import { DataSourceRepository, type DataSourceRow } from './repository';
import { toDataSourceInfo } from './responses';

export interface RegisterInput {
  name: string;
  plugin_info: { plugin_id: string; version?: string; options?: Struct; upgrade_mode?: UpgradeMode; secret_id?: string; provider?: string };
  tags?: Struct;
}

const FILTERS = { data_source_id: 'data_source_id', name: 'name', state: 'state', monitoring_type: 'monitoring_type', provider: 'provider' };

/**
 * monitoring_type, provider and capability of a published data source plugin. Upstream reads them
 * from its repository's plugin record, which the platform has not: they come from the metadata its
 * `init` answers (`monitoring_type` or `capability.monitoring_type`, METRIC when neither is METRIC or
 * LOG; `provider`, else the request's plugin_info.provider).
 */
function remoteAbout(metadata: Struct, provider: string | undefined) {
  const cap = metadata.capability && typeof metadata.capability === 'object' && !Array.isArray(metadata.capability) ? (metadata.capability as Struct) : {};
  const type = [metadata.monitoring_type, cap.monitoring_type].find((t) => t === 'METRIC' || t === 'LOG') as 'METRIC' | 'LOG' | undefined;
  const monitoring_type = type ?? 'METRIC';
  return {
    monitoring_type,
    provider: typeof metadata.provider === 'string' ? metadata.provider.slice(0, 255) : (provider ?? ''),
    capability: { ...cap, monitoring_type },
  };
}

/** Data sources belong to a domain (upstream: DOMAIN_ADMIN writes, every workspace role reads). */
export class DataSourceService {
  private readonly plugins = dataSourcePlugins();
  private readonly repository: DataSourceRepository;

  constructor(private readonly deps: MonitoringDeps) {
    this.repository = new DataSourceRepository(deps.prisma);
  }

  private async find(auth: AuthContext, id: string): Promise<DataSourceRow> {
    const row = await this.repository.find(auth.domainId, id);
    if (!row) throw errors.notFound('data_source_id', id);
    return row;
  }

  private async save(row: DataSourceRow, data: Prisma.DataSourceUpdateInput) {
    const updated = await this.repository.update(row, data);
    return toDataSourceInfo(updated);
  }

  /**
   * The plugin serving this plugin_info (a published version first, else the built-in) and the
   * plugin_info to store: a published plugin's `DataSource.init` answers its metadata.
   */
  private resolve(domainId: string, input: PluginInfoInput) {
    return resolveChosenPluginInfo(this.deps.plugins, this.plugins, domainId, input, async (endpoint, options) => {
      const answer = await monitoringClient(this.deps.plugins!, endpoint, input.plugin_id).dataSource.init({ options });
      return answer.metadata;
    });
  }

  async register(auth: AuthContext, input: RegisterInput) {
    const { secret_id, provider, ...pluginInput } = input.plugin_info;
    // Upstream: a MANUAL plugin needs its version, and a secret or a provider must be named.
    if (pluginInput.upgrade_mode === 'MANUAL' && !pluginInput.version) throw errors.requiredParameter('plugin_info.version');
    if (!secret_id && !provider) throw errors.requiredParameter('plugin_info.[secret_id | provider]');
    const chosen = await this.resolve(auth.domainId, pluginInput);
    const info = chosen.info;
    const about = chosen.kind === 'builtin' ? chosen.plugin : remoteAbout(chosen.metadata, provider);
    const row = await this.repository.create({
      domain_id: auth.domainId,
      data_source_id: generateId('ds'),
      name: input.name,
      monitoring_type: about.monitoring_type,
      provider: about.provider,
      capability: about.capability as Prisma.InputJsonValue,
      plugin_info: { ...info, secret_id: secret_id ?? '', provider: provider ?? '' } as Prisma.InputJsonValue,
      tags: (input.tags ?? {}) as Prisma.InputJsonValue,
    });
    return toDataSourceInfo(row);
  }

  async update(auth: AuthContext, input: { data_source_id: string; name?: string; tags?: Struct }) {
    const row = await this.find(auth, input.data_source_id);
    return this.save(row, {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.tags !== undefined && { tags: input.tags as Prisma.InputJsonValue }),
    });
  }

  async setState(auth: AuthContext, id: string, state: 'ENABLED' | 'DISABLED') {
    return this.save(await this.find(auth, id), { state });
  }

  async deregister(auth: AuthContext, id: string) {
    const row = await this.find(auth, id);
    await this.repository.delete(row);
  }

  /** New version / options / upgrade mode; the metadata is refreshed from the plugin. */
  async updatePlugin(auth: AuthContext, input: { data_source_id: string; version?: string; options?: Struct; upgrade_mode?: UpgradeMode }) {
    const row = await this.find(auth, input.data_source_id);
    const current = row.plugin_info as StoredPluginInfo;
    const { info } = await this.resolve(row.domain_id, {
      plugin_id: current.plugin_id,
      version: input.version ?? current.version,
      options: input.options ?? current.options,
      upgrade_mode: input.upgrade_mode ?? current.upgrade_mode,
    });
    return this.save(row, { plugin_info: { ...current, ...info } as Prisma.InputJsonValue });
  }

  /**
   * The plugin and its version exist, the options satisfy it, and the source answers: the plugin's
   * own check runs against the real endpoint. An AUTO plugin is moved to the latest version first.
   * A published plugin is asked `DataSource.verify` with the options and secret_data (monitoring keeps
   * no secret store: secret_id names upstream's secret service, so secret_data is empty); its refusal
   * is the answer (its text redacted by libs/plugin).
   */
  async verifyPlugin(auth: AuthContext, id: string) {
    const row = await this.find(auth, id);
    const current = row.plugin_info as StoredPluginInfo;
    const chosen = await this.resolve(row.domain_id, current);
    const info = chosen.info;
    if (info.version !== current.version) await this.save(row, { plugin_info: { ...current, ...info } as Prisma.InputJsonValue });
    if (chosen.kind === 'builtin') await chosen.plugin.verify(info.options, { outbound: this.deps.config.outbound });
    else await monitoringClient(this.deps.plugins!, chosen.endpoint, current.plugin_id).dataSource.verify({ options: info.options, secret_data: {}, schema: '' });
  }

  async get(auth: AuthContext, id: string) {
    return toDataSourceInfo(await this.find(auth, id));
  }

  async list(auth: AuthContext, input: { query?: Query } & Record<string, unknown>) {
    const scope = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }, ...equalsFilters(input, FILTERS)];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), dataSourceResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toDataSourceInfo(r as DataSourceRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), dataSourceResource, query, [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }]);
  }
}
