import type { AuthContext } from '@platform/auth';
import { generateId, generateSecret } from '@platform/core';
import { DirectoryClient } from '@platform/directory';
import { errors } from '@platform/errors';
import { applyOnly, runList, runStat, type Query, type StatisticsQuery } from '@platform/query';
import type { MonitoringDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import type { WebhookCache } from '../ingest/webhook-cache';
import type { WebhookCopy, WebhookSource } from '../ingest/webhook-copy';
import type { PluginInfoInput, StoredPluginInfo } from '../plugins/plugin-info';
import { monitoringClient, resolveChosenPluginInfo } from '../plugins/remote';
import type { Struct, UpgradeMode } from '../plugins/registry';
import { webhookPlugins } from '../plugins/webhook';
import { equalsFilters, type ProjectAccess } from '../scope';
import { webhookResource } from './fields';
import { WebhookRepository, type WebhookRow } from './repository';
import { toWebhookInfo } from './responses';

const FILTERS = { webhook_id: 'webhook_id', name: 'name', state: 'state', access_key: 'access_key', workspace_id: 'workspace_id', project_id: 'project_id' };

/** Webhooks belong to a project of a workspace; their URL is how external systems post events. */
export class WebhookService {
  private readonly plugins = webhookPlugins();
  private readonly directory: DirectoryClient;
  private readonly repository: WebhookRepository;

  constructor(
    private readonly deps: MonitoringDeps,
    private readonly cache: WebhookCache,
    private readonly access: ProjectAccess,
    private readonly copy: WebhookCopy,
  ) {
    this.directory = access.directory;
    this.repository = new WebhookRepository(deps.prisma);
  }

  /** The webhook if the caller may see it (a member: of their projects), else ERROR_NOT_FOUND. */
  private async find(auth: AuthContext, id: string): Promise<WebhookRow> {
    const row = await this.repository.find(auth.domainId, id);
    if (!row || !(await this.access.visible(auth, row))) throw errors.notFound('webhook_id', id);
    return row;
  }

  /**
   * After a commit: the webhook's copy in Redis (what the URL reads while PostgreSQL is down) and
   * every replica's cache. The commit stands if Redis fails: the failure is logged and the whole copy
   * republished as soon as it can be (see WebhookCopy.republishSoon).
   */
  private async copied(webhookId: string, write: () => Promise<void>) {
    this.cache.invalidate(webhookId);
    try {
      await write();
    } catch (e) {
      this.deps.logger.error({ err: (e as Error).message, webhook_id: webhookId }, 'webhook copy not written; republishing');
      this.copy.republishSoon();
    }
  }

  private async save(row: WebhookRow, data: Prisma.WebhookUpdateInput) {
    const updated = await this.repository.update(row, data);
    await this.copied(row.webhook_id, () => this.copy.put(updated as WebhookSource));
    return toWebhookInfo(updated);
  }

  /** The project must be a real project of the caller's workspace, as identity's directory knows it. */
  private async checkProject(auth: AuthContext, projectId: string) {
    // A member creates webhooks only in their projects (upstream's authorization handler: 403).
    (await this.access.projects(auth)).requireWrite(projectId);
    let project;
    try {
      project = await this.directory.getProject(auth.domainId, projectId);
    } catch (e) {
      this.deps.logger.error({ err: (e as Error).message }, 'project directory unavailable');
      throw errors.unavailable('Project directory unavailable; retry later.');
    }
    if (!project || project.workspace_id !== auth.workspaceId) throw errors.notFound('project_id', projectId);
  }

  /**
   * The plugin serving this plugin_info (a published version first, else the built-in) and the
   * plugin_info to store: a published plugin's `Webhook.init` answers its metadata.
   */
  private resolve(domainId: string, input: PluginInfoInput) {
    return resolveChosenPluginInfo(this.deps.plugins, this.plugins, domainId, input, async (endpoint, options) => {
      const answer = await monitoringClient(this.deps.plugins!, endpoint, input.plugin_id).webhook.init({ options });
      return answer.metadata;
    });
  }

  async create(auth: AuthContext, input: { name: string; project_id: string; plugin_info: PluginInfoInput; tags?: Struct }) {
    await this.checkProject(auth, input.project_id);
    const chosen = await this.resolve(auth.domainId, input.plugin_info);
    const info = chosen.info;
    const capability = chosen.kind === 'builtin' ? chosen.plugin.capability : {};
    const webhook_id = generateId('webhook');
    const access_key = generateSecret(24);
    const row = await this.repository.create({
      domain_id: auth.domainId,
      webhook_id,
      workspace_id: auth.workspaceId,
      project_id: input.project_id,
      name: input.name,
      access_key,
      webhook_url: `${this.deps.config.publicBaseUrl}/monitoring/v1/webhook/${webhook_id}/${access_key}/events`,
      capability: capability as Prisma.InputJsonValue,
      plugin_info: info as unknown as Prisma.InputJsonValue,
      tags: (input.tags ?? {}) as Prisma.InputJsonValue,
    });
    await this.copied(webhook_id, () => this.copy.put(row as WebhookSource));
    return toWebhookInfo(row);
  }

  async update(auth: AuthContext, input: { webhook_id: string; name?: string; tags?: Struct }) {
    const row = await this.find(auth, input.webhook_id);
    return this.save(row, {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.tags !== undefined && { tags: input.tags as Prisma.InputJsonValue }),
    });
  }

  async setState(auth: AuthContext, id: string, state: 'ENABLED' | 'DISABLED') {
    return this.save(await this.find(auth, id), { state });
  }

  /** Removes the webhook: its URL stops working at once; its events stay. */
  async delete(auth: AuthContext, id: string) {
    const row = await this.find(auth, id);
    const deleted = await this.repository.delete(row);
    await this.copied(row.webhook_id, () => this.copy.remove(deleted));
  }

  async updatePlugin(auth: AuthContext, input: { webhook_id: string; version?: string; options?: Struct; upgrade_mode?: UpgradeMode }) {
    const row = await this.find(auth, input.webhook_id);
    const current = row.plugin_info as StoredPluginInfo;
    const upgrade_mode = input.upgrade_mode ?? current.upgrade_mode;
    const { info } = await this.resolve(row.domain_id, {
      plugin_id: current.plugin_id,
      version: input.version ?? current.version,
      options: input.options ?? current.options,
      upgrade_mode,
    });
    return this.save(row, { plugin_info: info as unknown as Prisma.InputJsonValue });
  }

  /**
   * The plugin and version exist and the options satisfy it (an AUTO plugin moves to the latest
   * version). A published plugin is asked: `Webhook.verify` with the options; its refusal is the answer.
   */
  async verifyPlugin(auth: AuthContext, id: string) {
    const row = await this.find(auth, id);
    const current = row.plugin_info as StoredPluginInfo;
    const chosen = await this.resolve(row.domain_id, current);
    if (chosen.kind === 'remote') await monitoringClient(this.deps.plugins!, chosen.endpoint, current.plugin_id).webhook.verify({ options: chosen.info.options });
    if (chosen.info.version !== current.version) await this.save(row, { plugin_info: chosen.info as unknown as Prisma.InputJsonValue });
  }

  async get(auth: AuthContext, id: string) {
    return toWebhookInfo(await this.find(auth, id));
  }

  async list(auth: AuthContext, input: { query?: Query } & Record<string, unknown>) {
    const scope = [...(await this.access.conditions(auth, input.project_id)), ...equalsFilters(input, FILTERS)];
    const { rows, total_count } = await runList(this.deps.reads.for(auth), webhookResource, input.query, scope);
    return { results: rows.map((r) => applyOnly(toWebhookInfo(r as WebhookRow), input.query?.only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), webhookResource, query, await this.access.conditions(auth));
  }
}
