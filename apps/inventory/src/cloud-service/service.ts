import type { AuthContext } from '@platform/auth';
import { generateId } from '@platform/core';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runAnalyze, runList, runStat, type AnalyzeQuery, type Condition, type Query, type StatisticsQuery, eqConditions } from '@platform/query';
import type { InventoryDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import { cloudServiceResource } from './fields';
import { CloudServiceRepository, type Attributes, type CloudServiceRow } from './repository';
import { toCloudServiceInfo } from './responses';
import { QueryScoper } from './scope';
import { replicaPrisma } from '../replica-prisma';

type Obj = Record<string, unknown>;

export interface CreateInput extends Attributes {
  provider: string;
  cloud_service_group: string;
  cloud_service_type: string;
  data: Obj;
}

export interface ListInput {
  query?: Query;
  cloud_service_id?: string;
  name?: string;
  state?: string;
  ip_address?: string;
  account?: string;
  instance_type?: string;
  cloud_service_type?: string;
  cloud_service_group?: string;
  provider?: string;
  region_code?: string;
  workspace_id?: string;
  project_id?: string;
  project_group_id?: string;
}

const LIST_FIELDS = [
  'cloud_service_id',
  'name',
  'state',
  'account',
  'instance_type',
  'cloud_service_type',
  'cloud_service_group',
  'provider',
  'region_code',
  'workspace_id',
  'project_id',
] as const;

const ANALYZE_MAX_LIMIT = 1000;

export const alreadyDeleted = (id: string) =>
  errors.wrongState('ERROR_RESOURCE_ALREADY_DELETED', `Cloud service ${id} is already deleted.`);

/** Upstream's collection information; there is no collector here, so only the time is known. */
const collectionInfo = (now: Date) => ({ collector_id: '', secret_id: '', service_account_id: '', last_collected_at: now.toISOString() });

export class CloudServiceService {
  readonly scoper: QueryScoper;
  private readonly services: CloudServiceRepository;

  constructor(private readonly deps: InventoryDeps) {
    this.scoper = new QueryScoper(deps.directory);
    this.services = new CloudServiceRepository(deps.prisma, deps.pool);
  }

  /**
   * project_id must be a project of the caller's workspace (identity's directory), and for a member one
   * of their projects (ERROR_PERMISSION_DENIED, checked first as upstream's authorization handler does).
   */
  private async checkProject(auth: AuthContext, projectId: string | undefined, creating = false) {
    const projects = await this.scoper.projects(auth);
    if (creating) projects.requireWrite(projectId);
    else projects.check(projectId);
    if (!projectId) return;
    const p = await this.deps.directory.getProject(auth.domainId, projectId);
    if (!p || p.workspace_id !== auth.workspaceId) throw errors.notFound('project_id', projectId);
  }

  /** The record if the caller may see it (any state; a member: in their projects), else ERROR_NOT_FOUND. */
  /** The cloud service if the caller may see it; `read`: a get's read, which the read replica may serve. */
  private async visible(auth: AuthContext, id: string, read = false): Promise<CloudServiceRow> {
    const r = read
      ? await this.deps.reads.withClient(auth, this.deps.prisma, replicaPrisma, (db) => this.services.find(auth.domainId, id, db))
      : await this.services.find(auth.domainId, id);
    if (!r || (auth.workspaceId && r.workspace_id !== auth.workspaceId) || !(await this.scoper.projects(auth)).allows(r.project_id)) {
      throw errors.notFound('cloud_service_id', id);
    }
    return r;
  }

  async create(auth: AuthContext, input: CreateInput) {
    await this.checkProject(auth, input.project_id, true);
    const now = new Date();
    const { provider, cloud_service_group: group, cloud_service_type: type } = input;
    const tags = input.tags ?? {};
    const row = {
      domain_id: auth.domainId,
      workspace_id: auth.workspaceId,
      cloud_service_id: generateId('cloud-svc'),
      project_id: input.project_id ?? '',
      name: input.name ?? '',
      account: input.account ?? '',
      instance_type: input.instance_type ?? '',
      instance_size: input.instance_size ?? 0,
      ip_addresses: input.ip_addresses ?? [],
      provider,
      cloud_service_group: group,
      cloud_service_type: type,
      ref_cloud_service_type: `${provider}.${group}.${type}`,
      data: input.data as Prisma.InputJsonValue,
      // upstream keeps metadata and tag keys per provider
      metadata: (input.metadata ? { [provider]: input.metadata } : {}) as Prisma.InputJsonValue,
      reference: { resource_id: input.reference?.resource_id ?? '', external_link: input.reference?.external_link ?? '' },
      tags: tags as Prisma.InputJsonValue,
      tag_keys: { [provider]: Object.keys(tags) },
      collection_info: collectionInfo(now),
      region_code: input.region_code ?? '',
      launched_at: now,
      created_at: now,
      updated_at: now,
    };
    return toCloudServiceInfo(await this.services.create(row));
  }

  /**
   * upstream's merge: `data`, `tags` and `reference` are merged key by key into what is stored, `metadata`
   * replaces the record provider's entry, the other attributes are replaced. One UPDATE, so concurrent
   * updates of different keys never lose each other; a DELETED record is not changed.
   */
  async update(auth: AuthContext, input: Attributes & { cloud_service_id: string }) {
    const current = await this.visible(auth, input.cloud_service_id);
    if (current.state === 'DELETED') throw alreadyDeleted(current.cloud_service_id);
    await this.checkProject(auth, input.project_id);
    const updated = await this.services.merge(current, input, new Date());
    if (!updated) throw alreadyDeleted(current.cloud_service_id); // deleted between the read and the update
    return toCloudServiceInfo(updated);
  }

  /** Soft delete (upstream): state DELETED and deleted_at; the record stays readable by `get`. */
  async delete(auth: AuthContext, id: string) {
    const current = await this.visible(auth, id);
    if (!(await this.services.markDeleted(current.domain_id, current.cloud_service_id))) throw alreadyDeleted(id);
  }

  async get(auth: AuthContext, id: string) {
    return toCloudServiceInfo(await this.visible(auth, id, true));
  }

  async list(auth: AuthContext, input: ListInput) {
    const extra: Condition[] = eqConditions(input, LIST_FIELDS);
    // upstream's authorization handler: a member naming a project not theirs is refused.
    (await this.scoper.projects(auth)).check(input.project_id);
    if (input.ip_address !== undefined) extra.push({ key: 'ip_addresses', value: input.ip_address, operator: 'eq' });
    if (input.project_group_id !== undefined) {
      extra.push({ key: 'project_id', value: await this.scoper.projectsOfGroups(auth, [input.project_group_id]), operator: 'in' });
    }
    const { query, scope } = await this.scoper.apply(auth, input.query ?? {}, extra);
    const { rows, total_count } = await runList(this.deps.reads.for(auth), cloudServiceResource, query, scope);
    const only = resolveOnly(cloudServiceResource, query);
    return { results: rows.map((r) => applyOnly(toCloudServiceInfo(r as CloudServiceRow), only)), total_count };
  }

  async stat(auth: AuthContext, q: StatisticsQuery) {
    const { query, scope } = await this.scoper.apply(auth, q);
    return runStat(this.deps.reads.for(auth), cloudServiceResource, query, scope);
  }

  /** upstream's set_query_page_limit(1000) applies to analyze too: `page.limit` defaults to and is capped at 1000. */
  async analyze(auth: AuthContext, q: AnalyzeQuery) {
    const limit = q.page?.limit && q.page.limit > 0 ? Math.min(q.page.limit, ANALYZE_MAX_LIMIT) : ANALYZE_MAX_LIMIT;
    const { query, scope } = await this.scoper.apply(auth, { ...q, page: { ...q.page, limit } });
    return runAnalyze(this.deps.reads.for(auth), cloudServiceResource, query, scope);
  }
}

