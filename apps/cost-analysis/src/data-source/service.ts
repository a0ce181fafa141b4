import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import { isUniqueViolation, withTransaction } from '@platform/db';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { CostAnalysisDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import { toJobInfo, type JobRow } from '../job/repository';
import { PluginError } from '../plugin/types';
import { canSee, DOMAIN_WORKSPACE, eqFilters, visibility } from '../scope';
import { lockDomainUnifiedCosts, rebuildUnifiedCosts } from '../unified-cost/builder';
import { dataSourceResource, toDataSourceInfo, type DataSourceRow, type PluginInfo } from './repository';
import { openDataSourceSecret, sealDataSourceSecret } from './secret';

type Json = Record<string, unknown>;

export interface RegisterInput {
  name: string;
  data_source_type?: string;
  provider?: string;
  secret_type?: string;
  secret_filter?: Json;
  template?: Json;
  plugin_info: { plugin_id: string; version?: string; options?: Json; secret_data?: Json; schema_id?: string; upgrade_mode?: string };
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

/** A plugin's complaint about its options, as the 400 a caller can act on. */
function asInvalid(e: unknown): never {
  if (e instanceof PluginError) throw new ApiError(400, e.code, e.message);
  throw e;
}

export class DataSourceService {
  constructor(private readonly deps: CostAnalysisDeps) {}

  private async find(auth: AuthContext, id: string): Promise<DataSourceRow> {
    const ds = await this.deps.prisma.dataSource.findUnique({ where: { domain_id_data_source_id: { domain_id: auth.domainId, data_source_id: id } } });
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

  private where(ds: DataSourceRow) {
    return { domain_id_data_source_id: { domain_id: ds.domain_id, data_source_id: ds.data_source_id } };
  }

  private async pluginInfo(input: { plugin_id: string; version?: string; options?: Json; upgrade_mode?: string; schema_id?: string }, secret: Json) {
    const { plugins } = this.deps;
    const plugin = plugins.get(input.plugin_id);
    const version = plugins.resolveVersion(plugin, input.version);
    const options = input.options ?? {};
    plugins.checkOptions(plugin, options);
    await plugin.verify({ options, secret_data: secret, schema: input.schema_id }).catch(asInvalid);
    const info: PluginInfo = {
      plugin_id: plugin.plugin_id,
      version,
      options,
      metadata: plugin.init(options).metadata,
      secret_id: '',
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
    if (input.data_source_type && input.data_source_type !== 'EXTERNAL') {
      throw errors.invalidParameter('data_source_type', 'only EXTERNAL (plugin) data sources are supported');
    }
    const secret = input.plugin_info.secret_data ?? {};
    const plugin_info = await this.pluginInfo(input.plugin_info, secret);
    const dataSourceId = generateId('ds');
    try {
      const ds = await this.deps.prisma.dataSource.create({
        data: {
          domain_id: auth.domainId,
          data_source_id: dataSourceId,
          workspace_id: workspaceId,
          resource_group: input.resource_group,
          name: input.name,
          data_source_type: 'EXTERNAL',
          provider: input.provider ?? '',
          secret_type: input.secret_type ?? 'MANUAL',
          secret_filter: (input.secret_filter ?? {}) as Prisma.InputJsonValue,
          template: (input.template ?? {}) as Prisma.InputJsonValue,
          plugin_info: plugin_info as unknown as Prisma.InputJsonValue,
          secret_data: sealDataSourceSecret(this.deps.config.secretKeys, auth.domainId, dataSourceId, secret) as unknown as Prisma.InputJsonValue,
          tags: (input.tags ?? {}) as Prisma.InputJsonValue,
        },
      });
      return toDataSourceInfo(ds);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.notUnique('name', input.name);
      throw e;
    }
  }

  async update(auth: AuthContext, input: { data_source_id: string; name?: string; secret_filter?: Json; template?: Json; tags?: Json }) {
    const ds = await this.writable(auth, input.data_source_id);
    try {
      const updated = await this.deps.prisma.dataSource.update({
        where: this.where(ds),
        data: {
          ...(input.name !== undefined && { name: input.name }),
          ...(input.secret_filter !== undefined && { secret_filter: input.secret_filter as Prisma.InputJsonValue }),
          ...(input.template !== undefined && { template: input.template as Prisma.InputJsonValue }),
          ...(input.tags !== undefined && { tags: input.tags as Prisma.InputJsonValue }),
          updated_at: new Date(),
        },
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
    const current = ds.plugin_info as PluginInfo;
    const plugin_info = await this.pluginInfo(
      {
        plugin_id: current.plugin_id,
        version: input.version ?? current.version,
        options: input.options ?? current.options,
        upgrade_mode: input.upgrade_mode ?? current.upgrade_mode,
        schema_id: current.schema_id,
      },
      openDataSourceSecret(this.deps.config.secretKeys, ds),
    );
    const updated = await this.deps.prisma.dataSource.update({
      where: this.where(ds),
      data: { plugin_info: plugin_info as unknown as Prisma.InputJsonValue, updated_at: new Date() },
    });
    return toDataSourceInfo(updated);
  }

  async setState(auth: AuthContext, id: string, state: 'ENABLED' | 'DISABLED') {
    const ds = await this.writable(auth, id);
    const updated = await this.deps.prisma.dataSource.update({ where: this.where(ds), data: { state, updated_at: new Date() } });
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
      const d = [ds.domain_id, ds.data_source_id];
      await client.query(
        `UPDATE job SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND data_source_id = $2 AND status = 'IN_PROGRESS'`,
        d,
      );
      await client.query(
        `UPDATE job_task SET status = 'CANCELED', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND data_source_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
        d,
      );
      if (cascade) {
        const { rows } = await client.query(`WITH c AS (DELETE FROM cost WHERE domain_id = $1 AND data_source_id = $2 RETURNING billed_month) SELECT DISTINCT billed_month FROM c`, d);
        await client.query(`DELETE FROM data_source WHERE domain_id = $1 AND data_source_id = $2`, d);
        await rebuildUnifiedCosts(client, this.deps, ds.domain_id, rows.map((r) => r.billed_month));
      } else {
        await client.query(`DELETE FROM data_source WHERE domain_id = $1 AND data_source_id = $2`, d);
      }
    });
  }

  async get(auth: AuthContext, id: string) {
    return toDataSourceInfo(await this.find(auth, id));
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope = [...visibility(auth, true), ...eqFilters(input, ['data_source_id', 'name', 'state', 'data_source_type', 'provider', 'workspace_id'])];
    const { rows, total_count } = await runList(this.deps.pool, dataSourceResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toDataSourceInfo(r as DataSourceRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.pool, dataSourceResource, query, visibility(auth, true));
  }

  /**
   * Starts a collection job: the plugin divides it into tasks, each queued as a BullMQ job. One job per
   * data source at a time (upstream's ERROR_DUPLICATE_JOB); a job past JOB_TIMEOUT_SECONDS is TIMEOUT.
   */
  async sync(auth: AuthContext, input: { data_source_id: string; start?: string; no_preload_cache?: boolean }) {
    const { pool, plugins, queue, config } = this.deps;
    const ds = await this.writable(auth, input.data_source_id);
    if (ds.state !== 'ENABLED') throw new ApiError(400, 'ERROR_DATA_SOURCE_STATE', `Data source ${ds.data_source_id} is disabled.`);
    const info = ds.plugin_info as PluginInfo;
    const plugin = plugins.get(info.plugin_id);
    const secret = openDataSourceSecret(this.deps.config.secretKeys, ds);
    const { tasks, changed } = await plugin
      .getTasks({ options: info.options, secret_data: secret, start: input.start, last_synchronized_at: ds.last_synchronized_at?.toISOString() })
      .catch(asInvalid);

    const taskIds: string[] = [];
    const job = await withTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sync:${ds.domain_id}:${ds.data_source_id}`]);
      const running = await client.query<JobRow>(`SELECT * FROM job WHERE domain_id = $1 AND data_source_id = $2 AND status = 'IN_PROGRESS'`, [
        ds.domain_id,
        ds.data_source_id,
      ]);
      for (const r of running.rows) {
        if (Date.now() - r.created_at.getTime() < config.jobTimeoutSeconds * 1000) {
          throw errors.conflict('ERROR_DUPLICATE_JOB', `Data source ${ds.data_source_id} already has a running job (${r.job_id}).`);
        }
        await client.query(
          `UPDATE job SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now() WHERE domain_id = $1 AND job_id = $2`,
          [r.domain_id, r.job_id],
        );
        await client.query(
          `UPDATE job_task SET status = 'TIMEOUT', error_code = 'ERROR_JOB_TIMEOUT', error_message = 'The job did not finish in time.', finished_at = now(), updated_at = now()
           WHERE domain_id = $1 AND job_id = $2 AND status IN ('PENDING', 'IN_PROGRESS')`,
          [r.domain_id, r.job_id],
        );
        await client.query(`DELETE FROM cost WHERE domain_id = $1 AND data_source_id = $2 AND job_id = $3`, [r.domain_id, r.data_source_id, r.job_id]);
      }
      const jobId = generateId('job');
      const status = tasks.length ? 'IN_PROGRESS' : 'SUCCESS';
      const { rows } = await client.query<JobRow>(
        `INSERT INTO job (domain_id, job_id, workspace_id, resource_group, data_source_id, status, options, total_tasks, remained_tasks, changed, finished_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, CASE WHEN $6 = 'SUCCESS' THEN now() END) RETURNING *`,
        [ds.domain_id, jobId, ds.workspace_id, ds.resource_group, ds.data_source_id, status, JSON.stringify({ start: input.start ?? null, no_preload_cache: input.no_preload_cache ?? false }), tasks.length, JSON.stringify(changed)],
      );
      for (const t of tasks) {
        const id = generateId('job-task');
        taskIds.push(id);
        await client.query(
          `INSERT INTO job_task (domain_id, job_task_id, workspace_id, resource_group, job_id, data_source_id, options, changed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
          [ds.domain_id, id, ds.workspace_id, ds.resource_group, jobId, ds.data_source_id, JSON.stringify(t.task_options), t.task_changed ? JSON.stringify(t.task_changed) : null],
        );
      }
      if (!tasks.length) await client.query(`UPDATE data_source SET last_synchronized_at = now() WHERE domain_id = $1 AND data_source_id = $2`, [ds.domain_id, ds.data_source_id]);
      return rows[0];
    });
    // Queued after the commit (a worker must find the task). If Redis is down now, the worker's sweep
    // queues the PENDING tasks later: jobId = job_task_id keeps it to one BullMQ job per task.
    await queue
      .addBulk(taskIds.map((id) => ({ name: 'collect', data: { domain_id: ds.domain_id, job_task_id: id }, opts: { jobId: id, attempts: config.worker.attempts } })))
      .catch((err) => this.deps.logger.warn({ err: (err as Error).message, job_id: job.job_id }, 'queueing job tasks failed; the worker sweep will retry'));
    return toJobInfo(job);
  }
}
