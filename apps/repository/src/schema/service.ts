import type { AuthContext } from '@platform/auth';
import { isUniqueViolation } from '@platform/db';
import { ApiError, errors } from '@platform/errors';
import { applyOnly, resolveOnly, runList, runStat, type Condition, type Query, type StatisticsQuery, applyGetOnly, eqConditions } from '@platform/query';
import type { RepositoryDeps } from '../deps';
import { assertJsonSchema } from './json-schema';
import { schemaResource } from './fields';
import { SchemaRepository, type SchemaRow } from './repository';
import { toSchemaInfo } from './responses';
import { remoteFrom, type RemoteRepository, type SyncMode, type SyncOptions } from './source';
import { fetchRemoteSchema } from './sync';

type Struct = Record<string, unknown>;
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

const sourceKey = (o: SyncOptions) => `sync_options.${Object.keys(o)[0]}.url`;
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/** MANUAL and AUTOMATIC need somewhere to sync from. */
function checkSync(mode: string, options: SyncOptions) {
  if (mode !== 'NONE' && Object.keys(options).length === 0) {
    throw new ApiError(400, 'ERROR_REQUIRED_PARAMETER', `Required parameter. (key = sync_options, reason = sync_mode ${mode} needs one of github, git or gitlab)`, {
      key: 'sync_options',
    });
  }
}

export class SchemaService {
  private readonly schemas: SchemaRepository;

  constructor(private readonly deps: RepositoryDeps) {
    this.schemas = new SchemaRepository(deps.prisma, deps.pool);
  }

  /** The schema in the caller's domain, else ERROR_NOT_FOUND (never "exists but not yours"). */
  private async find(domainId: string, schemaId: string): Promise<SchemaRow> {
    const s = await this.schemas.find(domainId, schemaId);
    if (!s) throw errors.notFound('schema_id', schemaId);
    return s;
  }

  async create(auth: AuthContext, input: CreateInput) {
    assertJsonSchema(input.schema);
    const sync_mode = input.sync_mode ?? 'NONE';
    const sync_options = input.sync_options ?? {};
    checkSync(sync_mode, sync_options);
    try {
      const row = await this.schemas.create({
        domain_id: auth.domainId,
        schema_id: input.schema_id,
        name: input.name,
        sync_mode,
        sync_options,
        schema: input.schema,
        labels: input.labels ?? [],
        tags: input.tags ?? {},
        remote_repository: remoteFrom(sync_options) ?? {},
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
    const row = await this.schemas.update(s.domain_id, s.schema_id, {
      schema: input.schema,
      sync_mode,
      name: input.name,
      labels: input.labels,
      tags: input.tags,
      // A new source starts over: nothing synced from it yet, due at once when AUTOMATIC.
      ...(moved && { newSource: { sync_options, remote_repository: remoteFrom(sync_options) ?? {} } }),
    });
    return toSchemaInfo(row);
  }

  /** Claims the AUTOMATIC schemas due for a sync (the scheduler's sweep). */
  claimDue(now: Date, batch: number): Promise<SchemaRow[]> {
    return this.schemas.claimDue(now, new Date(now.getTime() - this.deps.config.sync.intervalSeconds * 1000), batch);
  }

  /** The `sync` operation: MANUAL and AUTOMATIC schemas fetch their remote document now. */
  async sync(auth: AuthContext, schemaId: string) {
    const s = await this.find(auth.domainId, schemaId);
    if (s.sync_mode === 'NONE') {
      throw new ApiError(400, 'ERROR_SYNC_MODE_NONE', `Schema ${schemaId} has sync_mode NONE: it has no remote to sync from.`);
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
    let fetched;
    try {
      fetched = await fetchRemoteSchema(s.schema_id, remote, sourceKey(options), this.deps.config.sync);
    } catch (e) {
      await this.schemas.recordSyncFailure(s, options, { ...remote, last_error: (e as Error).message });
      throw e;
    }
    const now = new Date();
    const stored = await this.schemas.storeSync(s, options, fetched.schema, { ...remote, synced_at: now.toISOString(), digest: fetched.digest, last_error: '' }, now);
    if (stored) return stored;
    await this.find(s.domain_id, s.schema_id);
    throw errors.conflict('ERROR_SCHEMA_CHANGED_DURING_SYNC', `The sync options of schema ${s.schema_id} changed during the sync; nothing was stored. Sync again.`);
  }

  async delete(auth: AuthContext, schemaId: string) {
    if (!(await this.schemas.delete(auth.domainId, schemaId))) throw errors.notFound('schema_id', schemaId);
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
