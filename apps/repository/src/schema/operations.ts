import { z } from 'zod';
import { ALL_ROLES, type RoleType } from '@platform/auth';
import { Empty, explicitZero, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, struct, tags } from '@platform/http';
import { QuerySchema, OnlySchema } from '@platform/query';
import type { SchemaService } from './service';
import { SYNC_MODES, syncOptionsSchema } from './source';
import { SchemaInfo, SchemasInfo } from './responses';

/** Codes of a schema's content and of syncing it from its remote. */
const SCHEMA_ERRORS = { 400: ['ERROR_INVALID_SCHEMA'] };
const SYNC_ERRORS = { 400: ['ERROR_INVALID_SCHEMA', 'ERROR_SYNC_MODE_NONE', 'ERROR_OUTBOUND_REFUSED'], 409: ['ERROR_SCHEMA_CHANGED_DURING_SYNC'] };

/** The spec marks `domain_id` R on every request of this module (the token still decides the domain). */
const domainRequest = <T extends z.ZodRawShape>(shape: T) => request(shape, { domainId: 'required' });

// Upstream's repository services: writes need DOMAIN_ADMIN; reads are open to every role of the
// domain (DOMAIN_ADMIN, WORKSPACE_OWNER, WORKSPACE_MEMBER, USER): schemas are domain-wide reference data.
const write = { permission: 'repository:Schema.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'repository:Schema.read', roles: ALL_ROLES };

/**
 * Upstream's SyncMode (repository/v2/common.proto, api 1.12.x, before v2 schemas were removed) is
 * `UNDEFINED = 0; NONE = 1; MANUAL = 2; AUTOMATIC = 3`: its zero, what a proto3 client sends unset, is
 * `UNDEFINED`, read as not set. `NONE` is a real sync mode, not a proto3 "not set": on update it turns
 * syncing off (leaving the field out keeps the mode), on list it filters schemas that do not sync.
 */
const syncMode = z
  .preprocess((v) => (v === 'UNDEFINED' ? undefined : v), z.enum(SYNC_MODES).optional())
  .meta({ 'x-input': { type: 'string', enum: ['UNDEFINED', ...SYNC_MODES] } });
const explicitSyncMode = explicitZero(syncMode);
/** ListValue: any JSON values (labels are usually strings). */
const labels = z.array(z.unknown()).max(100);

export function schemaOperations(service: SchemaService) {
  return [
    operation({
      path: '/repository/v2/schema/create',
      access: write,
      schema: domainRequest({
        schema_id: id,
        name,
        schema: struct,
        sync_mode: explicitSyncMode,
        sync_options: syncOptionsSchema.optional(),
        labels: labels.optional(),
        tags: tags.optional(),
      }),
      response: SchemaInfo,
      errors: mergeErrors(SCHEMA_ERRORS, { 409: ['ERROR_ALREADY_EXISTS'] }),
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/repository/v2/schema/update',
      access: write,
      schema: domainRequest({
        schema_id: id,
        schema: struct,
        name: name.optional(),
        sync_mode: explicitSyncMode,
        // {} clears the source (with sync_mode NONE): a value here, as NONE is
        sync_options: explicitZero(syncOptionsSchema.optional()),
        labels: labels.optional(),
        tags: tags.optional(),
      }),
      response: SchemaInfo,
      errors: mergeErrors(NOT_FOUND, SCHEMA_ERRORS),
      handler: (input, { auth }) => service.update(auth, input),
    }),
    idOperation({
      path: '/repository/v2/schema/sync',
      access: write,
      id: { schema_id: id },
      domainId: 'required',
      response: SchemaInfo,
      errors: mergeErrors(NOT_FOUND, SYNC_ERRORS),
      call: (auth, schemaId) => service.sync(auth, schemaId),
    }),
    idOperation({
      path: '/repository/v2/schema/delete',
      access: write,
      id: { schema_id: id },
      domainId: 'required',
      response: Empty,
      call: (auth, schemaId) => service.delete(auth, schemaId),
    }),
    idOperation({
      path: '/repository/v2/schema/get',
      access: read,
      id: { schema_id: id },
      fields: { only: OnlySchema.optional() },
      domainId: 'required',
      response: SchemaInfo,
      call: (auth, schemaId, { only }) => service.get(auth, schemaId, only),
    }),
    operation({
      path: '/repository/v2/schema/list',
      access: read,
      schema: domainRequest({
        query: QuerySchema.optional(),
        schema_id: z.string().optional(),
        name: z.string().optional(),
        sync_mode: explicitSyncMode,
        remote_repository_name: z.string().optional(),
      }),
      response: SchemasInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/repository/v2/schema/stat', read, service, { domainId: 'required' }),
  ];
}
