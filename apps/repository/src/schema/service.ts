import type { AuthContext } from '@platform/auth';
import { isoOrEmpty } from '@platform/core';
import { isUniqueViolation } from '@platform/db';
import { errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, applyGetOnly, eqConditions } from '@platform/query';
import type { RepositoryDeps } from '../deps';
import type { Prisma } from '../generated/prisma/client';
import { assertJsonSchema } from './json-schema';
import { schemaResource, type SchemaRow } from './repository';
import { remoteFrom, type RemoteRepository, type SyncMode, type SyncOptions } from './source';
import { fetchRemoteSchema } from './sync';

type Struct = Record<string, unknown>;

export function toSchemaInfo(r: SchemaRow) {
  return {
    schema_id: r.schema_id,
    name: r.name,
    sync_mode: r.sync_mode,
    sync_options: (r.sync_options ?? {}) as Struct,
    schema: (r.schema ?? {}) as Struct,
    labels: (r.labels ?? []) as unknown[],
    tags: (r.tags ?? {}) as Struct,
    remote_repository: (r.remote_repository ?? {}) as Struct,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
  };
}

export interface CreateInput {
  schema_id: string;
  name: string;
  schema: Struct;
  sync_mode?: SyncMode;
  sync_options?: SyncOptions;
  labels?: unknown[];
  tags?: Struct;
}
export type UpdateInput = Partial<Omit<CreateInput, 'schema_id'>> & { schema_id: string; schema: Struct };
export interface ListInput {
  query?: Query;
  schema_id?: string;
  name?: string;
  sync_mode?: SyncMode;
  remote_repository_name?: string;
}

const json = (v: unknown) => v as Prisma.InputJsonValue;
const key = (domainId: string, schemaId: string) => ({ domain_id_schema_id: { domain_id: domainId, schema_id: schemaId } });
const sourceKey = (o: SyncOptions) => `sync_options.${Object.keys(o)[0]}.url`;
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/** MANUAL and AUTOMATIC need somewhere to sync from. */
function checkSync(mode: string, options: SyncOptions) {
  if (mode !== 'NONE' && Object.keys(options).length === 0) {
    throw errors.requiredParameter('sync_options', `sync_mode ${mode} needs one of github, git or gitlab`);
  }
}

export class SchemaService {
  constructor(private readonly deps: RepositoryDeps) {}

  /** The schema in the caller's domain, else ERROR_NOT_FOUND (never "exists but not yours"). */
  private async find(domainId: string, schemaId: string): Promise<SchemaRow> {
    const s = await this.deps.prisma.schema.findUnique({ where: key(domainId, schemaId) });
    if (!s) throw errors.notFound('schema_id', schemaId);
    return s;
  }

  async create(auth: AuthContext, input: CreateInput) {
    assertJsonSchema(input.schema);
    const sync_mode = input.sync_mode ?? 'NONE';
    const sync_options = input.sync_options ?? {};
    checkSync(sync_mode, sync_options);
    try {
      const row = await this.deps.prisma.schema.create({
        data: {
          domain_id: auth.domainId,
          schema_id: input.schema_id,
          name: input.name,
          sync_mode,
          sync_options: json(sync_options),
          schema: json(input.schema),
          labels: json(input.labels ?? []),
          tags: json(input.tags ?? {}),
          remote_repository: json(remoteFrom(sync_options) ?? {}),
        },
      });
      return toSchemaInfo(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw errors.alreadyExists('schema_id', input.schema_id);
      throw e;
    }
  }

  async update(auth: AuthContext, input: UpdateInput) {
    const s = await this.find(auth.domainId, input.schema_id);
    assertJsonSchema(input.schema);
    const sync_options = input.sync_options ?? (s.sync_options as SyncOptions);
    const sync_mode = input.sync_mode ?? s.sync_mode;
    checkSync(sync_mode, sync_options);
    const moved = !same(sync_options, s.sync_options);
    const row = await this.deps.prisma.schema.update({
      where: key(s.domain_id, s.schema_id),
      data: {
        schema: json(input.schema),
        sync_mode,
        ...(input.name !== undefined && { name: input.name }),
        ...(input.labels !== undefined && { labels: json(input.labels) }),
        ...(input.tags !== undefined && { tags: json(input.tags) }),
        // A new source starts over: nothing synced from it yet, due at once when AUTOMATIC.
        ...(moved && { sync_options: json(sync_options), remote_repository: json(remoteFrom(sync_options) ?? {}), last_synced_at: null, last_sync_tried_at: null }),
        updated_at: new Date(),
      },
    });
    return toSchemaInfo(row);
  }

  /** The `sync` operation: MANUAL and AUTOMATIC schemas fetch their remote document now. */
  async sync(auth: AuthContext, schemaId: string) {
    const s = await this.find(auth.domainId, schemaId);
    if (s.sync_mode === 'NONE') {
      throw errors.wrongState('ERROR_SYNC_MODE_NONE', `Schema ${schemaId} has sync_mode NONE: it has no remote to sync from.`);
    }
    return toSchemaInfo(await this.syncRow(s));
  }

  /**
   * Replaces the schema with its remote document and records the sync in remote_repository. A failure
   * is recorded too (last_error) and thrown. The write only lands if sync_options did not change while
   * fetching, so a sync can never store a document from a source the schema no longer names.
   */
  async syncRow(s: SchemaRow): Promise<SchemaRow> {
    const options = s.sync_options as SyncOptions;
    const remote = { ...(remoteFrom(options) as RemoteRepository), ...(s.remote_repository as Partial<RemoteRepository>) };
    const where = 'domain_id = $1 AND schema_id = $2 AND sync_options = $3::jsonb';
    const params = [s.domain_id, s.schema_id, JSON.stringify(options)];
    let fetched;
    try {
      fetched = await fetchRemoteSchema(s.schema_id, remote, sourceKey(options), this.deps.config.sync);
    } catch (e) {
      await this.deps.pool.query(
        `UPDATE "schema" SET remote_repository = $4::jsonb, last_sync_tried_at = now() WHERE ${where}`,
        [...params, JSON.stringify({ ...remote, last_error: (e as Error).message })],
      );
      throw e;
    }
    const now = new Date();
    const { rows } = await this.deps.pool.query<SchemaRow>(
      `UPDATE "schema" SET "schema" = $4::jsonb, remote_repository = $5::jsonb, last_synced_at = $6, last_sync_tried_at = $6, updated_at = $6
       WHERE ${where} RETURNING *`,
      [...params, JSON.stringify(fetched.schema), JSON.stringify({ ...remote, synced_at: now.toISOString(), digest: fetched.digest, last_error: '' }), now],
    );
    if (rows[0]) return rows[0];
    await this.find(s.domain_id, s.schema_id);
    throw errors.conflict('ERROR_SCHEMA_CHANGED_DURING_SYNC', `The sync options of schema ${s.schema_id} changed during the sync; nothing was stored. Sync again.`);
  }

  async delete(auth: AuthContext, schemaId: string) {
    const { count } = await this.deps.prisma.schema.deleteMany({ where: { domain_id: auth.domainId, schema_id: schemaId } });
    if (!count) throw errors.notFound('schema_id', schemaId);
  }

  async get(auth: AuthContext, schemaId: string, only?: string[]) {
    return applyGetOnly(toSchemaInfo(await this.find(auth.domainId, schemaId)), only);
  }

  async list(auth: AuthContext, input: ListInput) {
    const scope: Condition[] = [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }];
    scope.push(...eqConditions(input, ['schema_id', 'name', 'sync_mode']));
    if (input.remote_repository_name !== undefined) scope.push({ key: 'remote_repository.name', value: input.remote_repository_name, operator: 'eq' });
    const { rows, total_count } = await runList(this.deps.reads.for(auth), schemaResource, input.query, scope);
    const only = resolveOnly(schemaResource, input.query);
    return { results: rows.map((r) => applyOnly(toSchemaInfo(r as SchemaRow), only)), total_count };
  }

  async stat(auth: AuthContext, query: StatisticsQuery) {
    return runStat(this.deps.reads.for(auth), schemaResource, query, [{ key: 'domain_id', value: auth.domainId, operator: 'eq' }]);
  }
}
