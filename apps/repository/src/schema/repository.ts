import type { Pool } from 'pg';
import type { PrismaClient, Prisma } from '../generated/prisma/client';
import type { SyncOptions } from './source';

/** A `schema` row as stored. */
export interface SchemaRow {
  domain_id: string;
  schema_id: string;
  name: string;
  sync_mode: string;
  sync_options: unknown;
  schema: unknown;
  labels: unknown;
  tags: unknown;
  remote_repository: unknown;
  created_at: Date;
  updated_at: Date;
  last_synced_at: Date | null;
  last_sync_tried_at: Date | null;
}

const json = (v: unknown) => v as Prisma.InputJsonValue;
const key = (domainId: string, schemaId: string) => ({ domain_id_schema_id: { domain_id: domainId, schema_id: schemaId } });

/** What a new schema is stored with. */
export interface NewSchema {
  domain_id: string;
  schema_id: string;
  name: string;
  sync_mode: string;
  sync_options: SyncOptions;
  schema: unknown;
  labels: unknown[];
  tags: Record<string, unknown>;
  remote_repository: unknown;
}

/** What an update changes; a new source starts over (nothing synced from it yet). */
export interface SchemaChanges {
  schema: unknown;
  sync_mode: string;
  name?: string;
  labels?: unknown[];
  tags?: Record<string, unknown>;
  newSource?: { sync_options: SyncOptions; remote_repository: unknown };
}

/** Every read and write of the `schema` table (the query DSL's list and stat read through fields.ts). */
export class SchemaRepository {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

  find(domainId: string, schemaId: string): Promise<SchemaRow | null> {
    return this.prisma.schema.findUnique({ where: key(domainId, schemaId) });
  }

  create(s: NewSchema): Promise<SchemaRow> {
    return this.prisma.schema.create({
      data: { ...s, sync_options: json(s.sync_options), schema: json(s.schema), labels: json(s.labels), tags: json(s.tags), remote_repository: json(s.remote_repository) },
    });
  }

  update(domainId: string, schemaId: string, c: SchemaChanges): Promise<SchemaRow> {
    return this.prisma.schema.update({
      where: key(domainId, schemaId),
      data: {
        schema: json(c.schema),
        sync_mode: c.sync_mode,
        ...(c.name !== undefined && { name: c.name }),
        ...(c.labels !== undefined && { labels: json(c.labels) }),
        ...(c.tags !== undefined && { tags: json(c.tags) }),
        ...(c.newSource && { sync_options: json(c.newSource.sync_options), remote_repository: json(c.newSource.remote_repository), last_synced_at: null, last_sync_tried_at: null }),
        updated_at: new Date(),
      },
    });
  }

  /** Deletes one schema; false when the domain has none of that id. */
  async delete(domainId: string, schemaId: string): Promise<boolean> {
    const { count } = await this.prisma.schema.deleteMany({ where: { domain_id: domainId, schema_id: schemaId } });
    return count > 0;
  }

  /** Records a failed sync attempt, only while the schema still names the source it was fetched from. */
  async recordSyncFailure(s: SchemaRow, options: SyncOptions, remote: unknown): Promise<void> {
    await this.pool.query(
      `UPDATE "schema" SET remote_repository = $4::jsonb, last_sync_tried_at = now() WHERE domain_id = $1 AND schema_id = $2 AND sync_options = $3::jsonb`,
      [s.domain_id, s.schema_id, JSON.stringify(options), JSON.stringify(remote)],
    );
  }

  /** Stores a fetched document, only while the schema still names the source it was fetched from; undefined when it no longer does. */
  async storeSync(s: SchemaRow, options: SyncOptions, document: unknown, remote: unknown, at: Date): Promise<SchemaRow | undefined> {
    const { rows } = await this.pool.query<SchemaRow>(
      `UPDATE "schema" SET "schema" = $4::jsonb, remote_repository = $5::jsonb, last_synced_at = $6, last_sync_tried_at = $6, updated_at = $6
       WHERE domain_id = $1 AND schema_id = $2 AND sync_options = $3::jsonb RETURNING *`,
      [s.domain_id, s.schema_id, JSON.stringify(options), JSON.stringify(document), JSON.stringify(remote), at],
    );
    return rows[0];
  }

  /**
   * Claims up to `batch` AUTOMATIC schemas last tried before `dueBefore` (or never): stamps
   * last_sync_tried_at in the statement that picks them (FOR UPDATE SKIP LOCKED), so replicas never
   * claim the same schema in one interval.
   */
  async claimDue(now: Date, dueBefore: Date, batch: number): Promise<SchemaRow[]> {
    const { rows } = await this.pool.query<SchemaRow>(
      `UPDATE "schema" s SET last_sync_tried_at = $1
       FROM (SELECT domain_id, schema_id FROM "schema"
             WHERE sync_mode = 'AUTOMATIC' AND (last_sync_tried_at IS NULL OR last_sync_tried_at <= $2)
             ORDER BY last_sync_tried_at NULLS FIRST LIMIT $3 FOR UPDATE SKIP LOCKED) due
       WHERE s.domain_id = due.domain_id AND s.schema_id = due.schema_id
       RETURNING s.*`,
      [now, dueBefore, batch],
    );
    return rows;
  }
}
