import { z } from 'zod';
import type { RoleType } from '@platform/auth';
import { Empty, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, struct, tags } from '@platform/http';
import { QuerySchema, OnlySchema } from '@platform/query';
import type { StorageService } from './service';
import { StorageInfo, StoragesInfo } from './responses';

/** Codes of choosing and checking a plugin. */
const PLUGIN_ERRORS = mergeErrors(NOT_FOUND, { 400: ['ERROR_INVALID_PLUGIN_VERSION', 'ERROR_VERIFY_PLUGIN_FAILURE', 'ERROR_OUTBOUND_REFUSED'] });
const IN_USE_ERRORS = mergeErrors(PLUGIN_ERRORS, { 400: ['ERROR_STORAGE_HAS_NO_PLUGIN', 'ERROR_STORAGE_STATE_DISABLED'] });

/** The spec marks `domain_id` R on every request of this module (the token still decides the domain). */
const domainRequest = <T extends z.ZodRawShape>(shape: T) => request(shape, { domainId: 'required' });

// Upstream's statistics services (schedule, history) allow only DOMAIN_ADMIN, for reads and writes:
// a storage is a domain-wide resource holding credentials.
const write = { permission: 'statistics:Storage.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'statistics:Storage.read', roles: ['DOMAIN_ADMIN'] as RoleType[] };

/**
 * PluginRequest: every field is R in the spec but `schema`: a proto3 client sends `""` for a schema it
 * does not set, which means the plugin's first supported schema (as an absent one always did).
 */
const pluginRequest = z.strictObject({
  plugin_id: id,
  version: z.string().trim().min(1).max(64),
  options: struct,
  secret_data: struct,
  schema: z.string().trim().min(1).max(255).optional(),
});

export function storageOperations(service: StorageService) {
  return [
    operation({
      path: '/statistics/v1/storage/register',
      access: write,
      schema: domainRequest({ name, user_id: id, plugin_info: pluginRequest.optional(), tags: tags.optional() }),
      response: StorageInfo,
      errors: PLUGIN_ERRORS,
      handler: (input, { auth }) => service.register(auth, input),
    }),
    operation({
      path: '/statistics/v1/storage/update',
      access: write,
      schema: domainRequest({ storage_id: id, name: name.optional(), tags: tags.optional() }),
      response: StorageInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    operation({
      path: '/statistics/v1/storage/update-plugin',
      access: write,
      schema: domainRequest({
        storage_id: id,
        version: z.string().trim().min(1).max(64).optional(),
        options: struct.optional(),
        secret_data: struct.optional(),
      }),
      response: StorageInfo,
      errors: IN_USE_ERRORS,
      handler: (input, { auth }) => service.updatePlugin(auth, input),
    }),
    idOperation({
      path: '/statistics/v1/storage/verify-plugin',
      access: write,
      id: { storage_id: id },
      domainId: 'required',
      response: Empty,
      errors: IN_USE_ERRORS,
      call: (auth, storageId) => service.verifyPlugin(auth, storageId),
    }),
    idOperation({
      path: '/statistics/v1/storage/enable',
      access: write,
      id: { storage_id: id },
      domainId: 'required',
      response: StorageInfo,
      call: (auth, storageId) => service.setState(auth, storageId, 'ENABLED'),
    }),
    idOperation({
      path: '/statistics/v1/storage/disable',
      access: write,
      id: { storage_id: id },
      domainId: 'required',
      response: StorageInfo,
      call: (auth, storageId) => service.setState(auth, storageId, 'DISABLED'),
    }),
    idOperation({
      path: '/statistics/v1/storage/deregister',
      access: write,
      id: { storage_id: id },
      domainId: 'required',
      response: Empty,
      call: (auth, storageId) => service.deregister(auth, storageId),
    }),
    idOperation({
      path: '/statistics/v1/storage/get',
      access: read,
      id: { storage_id: id },
      fields: { only: OnlySchema.optional() },
      domainId: 'required',
      response: StorageInfo,
      call: (auth, storageId, { only }) => service.get(auth, storageId, only),
    }),
    operation({
      path: '/statistics/v1/storage/list',
      access: read,
      schema: domainRequest({
        query: QuerySchema.optional(),
        storage_id: z.string().optional(),
        name: z.string().optional(),
        // A free string, as upstream's: a filter on the state (ENABLED, DISABLED); another value matches none.
        state: z.string().max(32).optional(),
        user_id: z.string().optional(),
      }),
      response: StoragesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/statistics/v1/storage/stat', read, service, { domainId: 'required' }),
  ];
}
