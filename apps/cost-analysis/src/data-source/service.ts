import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { isUniqueViolation, withTransaction } from '@platform/db';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { CostAnalysisDeps } from '../deps';
import { Prisma } from '../generated/prisma/client';
import { toJobInfo } from '../job/responses';
import { canSee, DOMAIN_WORKSPACE, visibility } from '../scope';
import { lockDomainUnifiedCosts, rebuildUnifiedCosts } from '../unified-cost/builder';
import { dataSourceResource } from './fields';
import { DataSourceRepository, type DataSourceRow, type DataSourceType, type PluginInfo } from './repository';
import { toDataSourceInfo } from './responses';
import { nextSyncAt, resolveSchedule, type Schedule, type ScheduleInput } from './schedule';
import { openDataSourceSecret, sealDataSourceSecret } from './secret';
import { asInvalid, CostJobs, type SyncInput } from './sync';
import { replicaPrisma } from '../replica-prisma';

type Json = Record<string, unknown>;

export interface RegisterInput {
  name: string;
  data_source_type?: string;
  provider?: string;
  secret_type?: string;
  secret_filter?: Json;
  template?: Json;
  plugin_info?: { plugin_id: string; version?: string; options?: Json; secret_data?: Json; secret_id?: string; schema_id?: string; upgrade_mode?: string };
  warehouse_info?: { type?: string };
  schedule?: ScheduleInput;
  tags?: Json;
  resource_group: 'DOMAIN' | 'WORKSPACE';
  workspace_id?: string;
}

export interface ListInput {
  query?: Query;
  data_source_id?: string;
  name?: string;
  state?: string;
  data_source_type?: string;
  provider?: string;
  workspace_id?: string;
}

export class DataSourceService {
  private readonly jobs: CostJobs;
  private readonly repository: DataSourceRepository;

  constructor(private readonly deps: CostAnalysisDeps) {
    this.jobs = new CostJobs(deps);
    this.repository = new DataSourceRepository(deps.prisma);
  }

  /** The data source if the caller may see it; `read`: a get's read, which the read replica may serve. */
  private async find(auth: AuthContext, id: string, read = false): Promise<DataSourceRow> {
    const ds = read
      ? await this.deps.reads.withClient(auth, this.deps.prisma, replicaPrisma, (db) => this.repository.find(auth.domainId, id, db))
      : await this.repository.find(auth.domainId, id);
    if (!ds || !canSee(auth, ds, true)) throw errors.notFound('data_source_id', id);
    return ds;
  }

  /** Writes: a domain data source needs a domain admin; a workspace owner changes only their workspace's. */
  private async writable(auth: AuthContext, id: string): Promise<DataSourceRow> {
    const ds = await this.find(auth, id);
    if (auth.scope === 'WORKSPACE' && ds.workspace_id !== auth.workspaceId) {
      throw errors.permissionDenied(`Data source ${id} belongs to the domain; a workspace owner cannot change it.`);
    }
    return ds;
  }

  private storedSchedule(ds: DataSourceRow): Schedule {
    return { state: ds.schedule_state === 'DISABLED' ? 'DISABLED' : 'ENABLED', hours: ds.schedule_hours ?? [] };
  }

  /**
   * The schedule columns, with the next slot counted from the clock's now. Only an EXTERNAL data source
   * has slots (upstream's scheduler syncs EXTERNAL ones only): LOCAL and WAREHOUSE keep their schedule
   * as given but never come due.
   */
  private scheduleData(dsState: string, schedule: Schedule, type: string) {
    const next = type === 'EXTERNAL' ? nextSyncAt(dsState, schedule, this.deps.clock()) : null;
    return { schedule_state: schedule.state, schedule_hours: schedule.hours, next_sync_at: next };
  }

  /**
   * What each type keeps (upstream's register): EXTERNAL needs plugin_info (REQUIRED
   * plugin_info.plugin_id without it) and verifies it; LOCAL needs nothing more (its template is
   * optional, as the proto marks it: see docs/decisions/cost-analysis.md); WAREHOUSE needs
   * warehouse_info.type. A type without a plugin ignores plugin_info, and a type other than WAREHOUSE
   * ignores warehouse_info, as upstream does.
   */
  private async typeFields(domainId: string, type: DataSourceType, input: RegisterInput) {
    const none = { plugin_info: null, warehouse_info: null, secret: {} };
    if (type === 'LOCAL') return none;
    if (type === 'WAREHOUSE') {
      if (!input.warehouse_info?.type) throw errors.requiredParameter('warehouse_info.type');
      return { ...none, warehouse_info: { type: input.warehouse_info.type } };
    }
    if (!input.plugin_info) throw errors.requiredParameter('plugin_info.plugin_id');
    const secret = input.plugin_info.secret_data ?? {};
    // secret_id: upstream's id of the secret made from secret_data; here the id of the sealed
    // secret_data. Without secret_data, a given secret_id is kept as the caller's reference (unresolved).
    const secretId = Object.keys(secret).length ? generateId('secret') : (input.plugin_info.secret_id ?? '');
    return { ...none, plugin_info: await this.pluginInfo(domainId, input.plugin_info, secret, secretId), secret };
  }

  /** Plugin settings of a data source without a plugin: upstream's ERROR_NOT_ALLOW_PLUGIN_SETTINGS. */
  private withPlugin(ds: DataSourceRow): PluginInfo {
    if (ds.data_source_type === 'EXTERNAL' && ds.plugin_info) return ds.plugin_info as PluginInfo;
    throw errors.notAllowed('ERROR_NOT_ALLOW_PLUGIN_SETTINGS', `A ${ds.data_source_type} data source has no plugin settings. (data_source_id = ${ds.data_source_id})`);
  }

  /**
   * The plugin settings to store: the plugin chosen for the domain (a published version wins over a
   * built-in), its options verified with the secret (which goes to the plugin and nowhere else), and
   * the metadata its init answers, as upstream's register and update_plugin.
   */
  private async pluginInfo(
    domainId: string,
    input: { plugin_id: string; version?: string; options?: Json; upgrade_mode?: string; schema_id?: string },
    secret: Json,
    secretId: string,
  ) {
    const { plugins } = this.deps;
    const { plugin, version } = await plugins.choose(domainId, input);
    const options = input.options ?? {};
    plugins.checkOptions(plugin, options);
    const { metadata } = await Promise.resolve(plugin.init(options, { domain_id: domainId })).catch(asInvalid);
    await plugin.verify({ options, secret_data: secret, schema: input.schema_id, domain_id: domainId }).catch(asInvalid);
    const info: PluginInfo = {
      plugin_id: input.plugin_id,
      version,
      options,
      metadata,
      secret_id: secretId,
      schema_id: input.schema_id ?? '',
      upgrade_mode: input.upgrade_mode ?? 'AUTO',
    };
    return info;
  }

  async register(auth: AuthContext, input: RegisterInput) {
    let workspaceId: string;
    if (input.resource_group === 'DOMAIN') {
      if (auth.roleType !== 'DOMAIN_ADMIN') throw errors.permissionDenied('A DOMAIN data source needs a domain admin.');
      workspaceId = DOMAIN_WORKSPACE;
    } else if (auth.scope === 'WORKSPACE') {
      if (input.workspace_id && input.workspace_id !== auth.workspaceId) throw errors.permissionDenied(`Permission denied. (workspace_id = ${input.workspace_id})`);
      workspaceId = auth.workspaceId;
    } else {
      if (!input.workspace_id) throw errors.requiredParameter('workspace_id');
      workspaceId = input.workspace_id;
    }
    const type = (input.data_source_type ?? 'EXTERNAL') as DataSourceType;
    const schedule = resolveSchedule(input.schedule ?? {}, { state: 'ENABLED', hours: [this.deps.config.defaultSyncHour] });
    const { plugin_info, warehouse_info, secret } = await this.typeFields(auth.domainId, type, input);
    const dataSourceId = generateId('ds');
    try {
      const ds = await this.repository.create({
        domain_id: auth.domainId,
        data_source_id: dataSourceId,
        workspace_id: workspaceId,
        resource_group: input.resource_group,
        name: input.name,
        data_source_type: type,
        provider: input.provider ?? '',
        secret_type: type === 'EXTERNAL' ? (input.secret_type ?? 'MANUAL') : '',
        secret_filter: (input.secret_filter ?? {}) as Prisma.InputJsonValue,
        template: (input.template ?? {}) as Prisma.InputJsonValue,
        plugin_info: plugin_info ? (plugin_info as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
        warehouse_info: warehouse_info ? (warehouse_info as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
        secret_data: sealDataSourceSecret(this.deps.config.secretKeys, auth.domainId, dataSourceId, secret) as unknown as Prisma.InputJsonValue,
        tags: (input.tags ?? {}) as Prisma.InputJsonValue,
        ...this.scheduleData('ENABLED', schedule, type),
      });
      return toDataSourceInfo(ds);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.notUnique('name', input.name);
      throw e;
    }
  }

  async update(auth: AuthContext, input: { data_source_id: string; name?: string; secret_filter?: Json; template?: Json; schedule?: ScheduleInput; tags?: Json }) {
    const ds = await this.writable(auth, input.data_source_id);
    // upstream's update: only a LOCAL data source has a template; the others' plugin or warehouse gives their data.
    if (input.template !== undefined && ds.data_source_type !== 'LOCAL') {
      throw errors.notAllowed('ERROR_NOT_ALLOW_PLUGIN_SETTINGS', `A ${ds.data_source_type} data source has no template. (data_source_id = ${ds.data_source_id})`);
    }
    const schedule = input.schedule && resolveSchedule(input.schedule, this.storedSchedule(ds));
    try {
      const updated = await this.repository.update(ds, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.secret_filter !== undefined && { secret_filter: input.secret_filter as Prisma.InputJsonValue }),
        ...(input.template !== undefined && { template: input.template as Prisma.InputJsonValue }),
        ...(input.tags !== undefined && { tags: input.tags as Prisma.InputJsonValue }),
        ...(schedule && this.scheduleData(ds.state, schedule, ds.data_source_type)),
        updated_at: new Date(),
      });
      return toDataSourceInfo(updated);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.notUnique('name', input.name ?? '');
      throw e;
    }
  }

  /** upstream's update_plugin: version, options and upgrade mode; metadata is refreshed from the plugin. */
  async updatePlugin(auth: AuthContext, input: { data_source_id: string; version?: string; options?: Json; upgrade_mode?: string }) {
    const ds = await this.writable(auth, input.data_source_id);
    const current = this.withPlugin(ds);
    const plugin_info = await this.pluginInfo(
      ds.domain_id,
      {
        plugin_id: current.plugin_id,
        version: input.version ?? current.version,
        options: input.options ?? current.options,
        upgrade_mode: input.upgrade_mode ?? current.upgrade_mode,
        schema_id: current.schema_id,
      },
      openDataSourceSecret(this.deps.config.secretKeys, ds),
      current.secret_id ?? '',
    );
    const updated = await this.repository.update(ds, { plugin_info: plugin_info as unknown as Prisma.InputJsonValue, updated_at: new Date() });
    return toDataSourceInfo(updated);
  }

  /**
   * upstream's verify_plugin: the data source's plugin (the version published now) checks its stored
   * options and secret. Nothing is changed; the secret goes to the plugin only.
   */
  async verifyPlugin(auth: AuthContext, id: string): Promise<void> {
    const ds = await this.writable(auth, id);
    const info = this.withPlugin(ds);
    const { plugin } = await this.deps.plugins.choose(ds.domain_id, info);
    const secret = openDataSourceSecret(this.deps.config.secretKeys, ds);
    await plugin.verify({ options: info.options ?? {}, secret_data: secret, schema: info.schema_id || undefined, domain_id: ds.domain_id }).catch(asInvalid);
  }

  async setState(auth: AuthContext, id: string, state: 'ENABLED' | 'DISABLED') {
    const ds = await this.writable(auth, id);
    // The schedule counts from now: enabling does not run the slots missed while disabled. A state
    // that does not change leaves next_sync_at alone (an overdue slot stays due).
    const updated = await this.repository.update(ds, { state, ...(ds.state !== state && this.scheduleData(state, this.storedSchedule(ds), ds.data_source_type)), updated_at: new Date() });
    return toDataSourceInfo(updated);
  }

  /**
   * Removes the data source, and (cascade_delete_cost, default true as upstream) its cost data and the
   * unified costs built from it. A running job of it is canceled first.
   */
  async deregister(auth: AuthContext, input: { data_source_id: string; cascade_delete_cost?: boolean }) {
    const ds = await this.writable(auth, input.data_source_id);
    const cascade = input.cascade_delete_cost ?? true;
    await withTransaction(this.deps.pool, async (client) => {
      await lockDomainUnifiedCosts(client, ds.domain_id);
      await this.repository.cancelRunningJobs(client, ds);
      if (cascade) {
        const months = await this.repository.deleteCosts(client, ds);
        await this.repository.delete(client, ds);
        await rebuildUnifiedCosts(client, this.deps, ds.domain_id, months);
      } else {
        await this.repository.delete(client, ds);
      }
    });
  }

  async get(auth: AuthContext, id: string) {
    return toDataSourceInfo(await this.find(auth, id, true));
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope = [...visibility(auth, true), ...eqConditions(input, ['data_source_id', 'name', 'state', 'data_source_type', 'provider', 'workspace_id'])];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), dataSourceResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toDataSourceInfo(r as DataSourceRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), dataSourceResource, query, visibility(auth, true));
  }

  /**
   * Starts a collection job now (the scheduler's slots go through the same CostJobs). One job per data
   * source at a time (upstream's ERROR_DUPLICATE_JOB); a job past JOB_TIMEOUT_SECONDS is TIMEOUT.
   */
  async sync(auth: AuthContext, input: { data_source_id: string } & SyncInput) {
    const ds = await this.writable(auth, input.data_source_id);
    return toJobInfo(await this.jobs.sync(ds, input));
  }
}
