import { z } from 'zod';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import { Empty, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, struct, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { PLUGIN_CALL_ERRORS, pluginInfoRequest, pluginVersion, upgradeMode } from '../plugin-schema';
import type { DataSourceService } from './service';
import { DataSourceInfo, DataSourcesInfo } from './responses';
/** Codes of choosing and checking a plugin. */
const PLUGIN_ERRORS = { 400: ['ERROR_INVALID_PLUGIN_VERSION', 'ERROR_OUTBOUND_REFUSED'] };

// Upstream: DOMAIN_ADMIN writes; DOMAIN_ADMIN, WORKSPACE_OWNER and WORKSPACE_MEMBER read.
const write = { permission: 'monitoring:DataSource.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'monitoring:DataSource.read', roles: WORKSPACE_ROLES };

export function dataSourceOperations(service: DataSourceService) {
  return [
    operation({
      path: '/monitoring/v1/data-source/register',
      access: write,
      schema: request({
        name,
        plugin_info: z.strictObject({ ...pluginInfoRequest, secret_id: z.string().max(255).optional(), provider: z.string().max(255).optional() }),
        tags: tags.optional(),
      }),
      response: DataSourceInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      handler: (input, { auth }) => service.register(auth, input),
    }),
    operation({
      path: '/monitoring/v1/data-source/update',
      access: write,
      schema: request({ data_source_id: id, name: name.optional(), tags: tags.optional() }),
      response: DataSourceInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    idOperation({
      path: '/monitoring/v1/data-source/enable',
      access: write,
      id: { data_source_id: id },
      response: DataSourceInfo,
      call: (auth, dataSourceId) => service.setState(auth, dataSourceId, 'ENABLED'),
    }),
    idOperation({
      path: '/monitoring/v1/data-source/disable',
      access: write,
      id: { data_source_id: id },
      response: DataSourceInfo,
      call: (auth, dataSourceId) => service.setState(auth, dataSourceId, 'DISABLED'),
    }),
    idOperation({
      path: '/monitoring/v1/data-source/deregister',
      access: write,
      id: { data_source_id: id },
      response: Empty,
      call: (auth, dataSourceId) => service.deregister(auth, dataSourceId),
    }),
    operation({
      path: '/monitoring/v1/data-source/update-plugin',
      access: write,
      schema: request({ data_source_id: id, version: pluginVersion.optional(), options: struct.optional(), upgrade_mode: upgradeMode.optional() }),
      response: DataSourceInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      handler: (input, { auth }) => service.updatePlugin(auth, input),
    }),
    idOperation({
      path: '/monitoring/v1/data-source/verify-plugin',
      access: write,
      id: { data_source_id: id },
      response: Empty,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      call: (auth, dataSourceId) => service.verifyPlugin(auth, dataSourceId),
    }),
    idOperation({
      path: '/monitoring/v1/data-source/get',
      access: read,
      id: { data_source_id: id },
      response: DataSourceInfo,
      call: (auth, dataSourceId) => service.get(auth, dataSourceId),
    }),
    operation({
      path: '/monitoring/v1/data-source/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        data_source_id: z.string().optional(),
        name: z.string().optional(),
        state: z.string().optional(),
        // upstream's MonitoringType enum: its zero NONE (a proto3 client's unset) is not a filter
        monitoring_type: z.enum(['METRIC', 'LOG']).optional(),
        provider: z.string().optional(),
      }),
      response: DataSourcesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/monitoring/v1/data-source/stat', read, service),
  ];
}
