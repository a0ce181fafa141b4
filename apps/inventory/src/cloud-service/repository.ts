import type { Pool } from 'pg';
import { generateId } from '@platform/core';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A `cloud_service` row as stored. */
export interface CloudServiceRow {
  domain_id: string;
  cloud_service_id: string;
  workspace_id: string;
  project_id: string;
  name: string;
  state: string;
  account: string;
  instance_type: string;
  instance_size: number;
  ip_addresses: string[] | null;
  provider: string;
  cloud_service_group: string;
  cloud_service_type: string;
  ref_cloud_service_type: string;
  data: unknown;
  metadata: unknown;
  reference: unknown;
  tags: unknown;
  tag_keys: unknown;
  collection_info: unknown;
  region_code: string;
  launched_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** What a new cloud service is stored with. */
export type NewCloudService = Prisma.CloudServiceUncheckedCreateInput;

export interface Reference {
  resource_id?: string;
  external_link?: string;
}

/** The attributes create and update take (besides the classification, which only create takes). */
export interface Attributes {
  name?: string;
  account?: string;
  instance_type?: string;
  instance_size?: number;
  ip_addresses?: string[];
  data?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  reference?: Reference;
  tags?: Record<string, unknown>;
  region_code?: string;
  project_id?: string;
}

/** Every read and write of the `cloud_service` table, and the `cloud_service_type` a create records (list, stat and analyze read through fields.ts). */
export class CloudServiceRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  /** The record in the domain, any state; `db`: the client to read through (the read replica's for a get). */
  find(domainId: string, id: string, db: PrismaClient = this.prisma): Promise<CloudServiceRow | null> {
    return db.cloudService.findUnique({ where: { domain_id_cloud_service_id: { domain_id: domainId, cloud_service_id: id } } });
  }

  /** Creates the record, and its type in the workspace unless there is one, in one transaction. */
  async create(row: NewCloudService): Promise<CloudServiceRow> {
    const { domain_id, workspace_id, provider, cloud_service_group, cloud_service_type } = row;
    const [, created] = await this.prisma.$transaction([
      this.prisma.cloudServiceType.createMany({
        data: [{ domain_id, workspace_id, provider, cloud_service_group, cloud_service_type, cloud_service_type_id: generateId('cloud-svc-type') }],
        skipDuplicates: true,
      }),
      this.prisma.cloudService.create({ data: row }),
    ]);
    return created;
  }

  /**
   * upstream's merge in one UPDATE: `data`, `tags` and `reference` merged key by key into what is
   * stored, `metadata` and the tag keys under the record's provider, the rest replaced; undefined when
   * the record is DELETED.
   */
  async merge(current: CloudServiceRow, changes: Attributes, now: Date): Promise<CloudServiceRow | undefined> {
    const values: unknown[] = [current.domain_id, current.cloud_service_id];
    const sets: string[] = [];
    const p = (v: unknown, cast = '') => {
      values.push(v);
      return `$${values.length}${cast}`;
    };
    // The provider keys metadata and tag keys; bound only when one of them changes (an unused
    // parameter has no type PostgreSQL can infer).
    let providerParam: string | undefined;
    const provider = () => (providerParam ??= p(current.provider, '::text'));
    for (const key of ['name', 'account', 'instance_type', 'region_code', 'project_id'] as const) {
      if (changes[key] !== undefined) sets.push(`${key} = ${p(changes[key])}`);
    }
    if (changes.instance_size !== undefined) sets.push(`instance_size = ${p(changes.instance_size, '::float8')}`);
    if (changes.ip_addresses !== undefined) sets.push(`ip_addresses = ${p(changes.ip_addresses, '::text[]')}`);
    if (changes.data !== undefined) sets.push(`data = data || ${p(JSON.stringify(changes.data), '::jsonb')}`);
    if (changes.reference !== undefined) sets.push(`reference = reference || ${p(JSON.stringify(changes.reference), '::jsonb')}`);
    if (changes.metadata !== undefined) sets.push(`metadata = metadata || jsonb_build_object(${provider()}, ${p(JSON.stringify(changes.metadata), '::jsonb')})`);
    if (changes.tags !== undefined) {
      const t = p(JSON.stringify(changes.tags), '::jsonb');
      sets.push(`tags = tags || ${t}`);
      sets.push(`tag_keys = tag_keys || jsonb_build_object(${provider()}, (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]'::jsonb) FROM jsonb_object_keys(tags || ${t}) AS k))`);
    }
    sets.push(`collection_info = collection_info || ${p(JSON.stringify({ last_collected_at: now.toISOString() }), '::jsonb')}`);
    sets.push(`updated_at = ${p(now, '::timestamptz')}`);
    const { rows } = await this.pool.query<CloudServiceRow>(
      `UPDATE cloud_service SET ${sets.join(', ')} WHERE domain_id = $1 AND cloud_service_id = $2 AND state <> 'DELETED' RETURNING *`,
      values,
    );
    return rows[0];
  }

  /** Soft delete: state DELETED and deleted_at; false when it was DELETED already. */
  async markDeleted(domainId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE cloud_service SET state = 'DELETED', deleted_at = now(), updated_at = now()
       WHERE domain_id = $1 AND cloud_service_id = $2 AND state <> 'DELETED'`,
      [domainId, id],
    );
    return !!rowCount;
  }
}
