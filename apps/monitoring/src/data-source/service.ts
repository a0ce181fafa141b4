import type { AuthContext } from '@platform/auth';
import { generateId, isoOrEmpty } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { MonitoringDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import { dataSourcePlugins } from '../plugins/data-source';
import { checkStoredPluginInfo, resolvePluginInfo, updatedPluginInfo, type StoredPluginInfo } from '../plugins/plugin-info';
import type { Struct, UpgradeMode } from '../plugins/registry';
import { equalsFilters } from '../scope';
import { dataSourceResource, type DataSourceRow } from './repository';

export function toDataSourceInfo(r: DataSourceRow) {
  const p = (r.plugin_info ?? {}) as StoredPluginInfo;
  return {
    data_source_id: r.data_source_id,
    name: r.name,
    state: r.state,
    monitoring_type: r.monitoring_type,
    provider: r.provider,
    capability: (r.capability ?? {}) as Struct,
    plugin_info: {
      plugin_id: p.plugin_id,
      version: p.version,
      options: p.options ?? {},
      metadata: p.metadata ?? {},
      upgrade_mode: p.upgrade_mode,
      secret_id: (p.secret_id as string | undefined) ?? '',
      provider: (p.provider as string | undefined) ?? '',
    },
    tags: (r.tags ?? {}) as Struct,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
  };
}

export interface RegisterInput {
  name: string;
  plugin_info: { plugin_id: string; version?: string; options?: Struct; upgrade_mode?: UpgradeMode; secret_id?: string; provider?: string };
  tags?: Struct;
}

const FILTERS = { data_source_id: 'data_source_id', name: 'name', state: 'state', monitoring_type: 'monitoring_type', provider: 'provider' };

/** Data sources belong to a domain (upstream: DOMAIN_ADMIN writes, every workspace role reads). */
export class DataSourceService {
  private readonly plugins = dataSourcePlugins();

  constructor(private readonly deps: MonitoringDeps) {}

  private async find(auth: AuthContext, id: string): Promise<DataSourceRow> {
    const row = await this.deps.prisma.dataSource.findUnique({ where: { domain_id_data_source_id: { domain_id: auth.domainId, data_source_id: id } } });
    if (!row) throw errors.notFound('data_source_id', id);
    return row;
  }

  private async save(row: DataSourceRow, data: Prisma.DataSourceUpdateInput) {
    const updated = await this.deps.prisma.dataSource.update({
      where: { domain_id_data_source_id: { domain_id: row.domain_id, data_source_id: row.data_source_id } },
      data,
    });
    return toDataSourceInfo(updated);
  }

  async register(auth: AuthContext, input: RegisterInput) {
    const { secret_id, provider, ...pluginInput } = input.plugin_info;
    // Upstream: a MANUAL plugin needs its version, and a secret or a provider must be named.
    if (pluginInput.upgrade_mode === 'MANUAL' && !pluginInput.version) throw errors.requiredParameter('plugin_info.version');
    if (!secret_id && !provider) throw errors.requiredParameter('plugin_info.[secret_id | provider]');
    const { plugin, info } = resolvePluginInfo(this.plugins, pluginInput);
    const row = await this.deps.prisma.dataSource.create({
      data: {
        domain_id: auth.domainId,
        data_source_id: generateId('ds'),
        name: input.name,
        monitoring_type: plugin.monitoring_type,
        provider: plugin.provider,
        capability: plugin.capability as Prisma.InputJsonValue,
        plugin_info: { ...info, secret_id: secret_id ?? '', provider: provider ?? '' } as Prisma.InputJsonValue,
        tags: (input.tags ?? {}) as Prisma.InputJsonValue,
      },
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
    await this.deps.prisma.dataSource.delete({ where: { domain_id_data_source_id: { domain_id: row.domain_id, data_source_id: row.data_source_id } } });
  }

  /** New version / options / upgrade mode; the metadata is refreshed from the plugin. */
  async updatePlugin(auth: AuthContext, input: { data_source_id: string; version?: string; options?: Struct; upgrade_mode?: UpgradeMode }) {
    const row = await this.find(auth, input.data_source_id);
    const current = row.plugin_info as StoredPluginInfo;
    const { info } = updatedPluginInfo(this.plugins, current, input);
    return this.save(row, { plugin_info: { ...current, ...info } as Prisma.InputJsonValue });
  }

  /**
   * The plugin and its version exist, the options satisfy it, and the source answers: the plugin's
   * own check runs against the real endpoint. An AUTO plugin is moved to the latest version first.
   */
  async verifyPlugin(auth: AuthContext, id: string) {
    const row = await this.find(auth, id);
    const current = row.plugin_info as StoredPluginInfo;
    const { plugin, info } = checkStoredPluginInfo(this.plugins, current);
    if (info.version !== current.version) await this.save(row, { plugin_info: { ...current, ...info } as Prisma.InputJsonValue });
    await plugin.verify(info.options, { outbound: this.deps.config.outbound });
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
