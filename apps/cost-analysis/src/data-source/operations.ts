import { z } from 'zod';
import { WORKSPACE_ROLES } from '@platform/auth';
import { Empty, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, struct, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { ADMIN_AND_OWNER } from '../scope';
import { scheduleInput } from './schedule';
import type { DataSourceService } from './service';
import { CostDataSourceInfo, CostDataSourcesInfo } from './responses';
import { JobInfo } from '../job/responses';
import { PLUGIN_ERROR_CODES } from '@platform/errors';

/**
 * A published plugin's own refusals come back with its code (docs/decisions/plugins.md "Errors"); those
 * of upstream's python-core (what libs/plugin-kit `fail` throws) are declared, a plugin's other codes
 * cannot be listed.
 */
const PLUGIN_OWN_CODES = {
  400: ['ERROR_REQUIRED_PARAMETER', 'ERROR_INVALID_PARAMETER', 'ERROR_INVALID_PARAMETER_TYPE', 'ERROR_INVALID_ARGUMENT', 'ERROR_AUTHENTICATE_FAILURE', 'ERROR_NOT_IMPLEMENTED'],
  403: ['ERROR_PERMISSION_DENIED'],
  404: ['ERROR_NOT_FOUND'],
  502: ['ERROR_UNKNOWN'],
};
const CALLS_PLUGIN = mergeErrors(PLUGIN_ERROR_CODES, PLUGIN_OWN_CODES);

/** Codes of a plugin's verification (its options, its file). */
const PLUGIN_ERRORS = { 400: ['ERROR_INVALID_COLUMN', 'ERROR_INVALID_URL', 'ERROR_OUTBOUND_REFUSED', 'ERROR_INVALID_CSV'] };

// upstream: DOMAIN_ADMIN and WORKSPACE_OWNER write (a DOMAIN data source needs the domain admin); reads
// are open to workspace members too, who see their workspace's and the domain's data sources.
const write = { permission: 'cost-analysis:DataSource.write', roles: ADMIN_AND_OWNER };
const read = { permission: 'cost-analysis:DataSource.read', roles: WORKSPACE_ROLES };
const upgrade_mode = z.enum(['AUTO', 'MANUAL', 'NONE']);

const pluginInfo = z.strictObject({
  plugin_id: id,
  version: z.string().trim().min(1).max(64).optional(),
  options: struct.optional(),
  secret_data: struct.optional(),
  // upstream's reference to a secret of its secret service: see docs/decisions/cost-analysis.md
  secret_id: z.string().trim().max(255).optional(),
  schema_id: z.string().max(255).optional(),
  upgrade_mode: upgrade_mode.optional(),
  metadata: struct.optional(),
});

// upstream's WarehouseInfo; `type` is checked by the service, as upstream's (REQUIRED warehouse_info.type
// for a WAREHOUSE data source), so a proto3 client's `{type: NONE}` on another type is not refused.
const warehouseInfo = z.strictObject({
  type: z.enum(['DATABRICKS']).optional().describe("The warehouse's kind (upstream's WarehouseType; DATABRICKS)."),
});
const dataSourceType = z.enum(['LOCAL', 'EXTERNAL', 'WAREHOUSE']);

// What a data source without a plugin (LOCAL, WAREHOUSE) refuses: upstream's codes.
const NO_PLUGIN_SETTINGS = { 400: ['ERROR_NOT_ALLOW_PLUGIN_SETTINGS'] };
const NO_SYNC = { 400: ['ERROR_NOT_ALLOW_SYNC_COMMAND'] };

export function dataSourceOperations(service: DataSourceService) {
  return [
    operation({
      path: '/cost-analysis/v1/data-source/register',
      access: write,
      schema: request({
        name,
        data_source_type: dataSourceType
          .optional()
          .describe('EXTERNAL (default): a plugin collects the costs; LOCAL: no plugin and no sync; WAREHOUSE: costs stay in a warehouse and are not synced here.'),
        provider: z.string().max(255).optional(),
        secret_type: z.enum(['MANUAL', 'USE_SERVICE_ACCOUNT_SECRET']).optional(),
        secret_filter: struct.optional(),
        template: struct.optional(),
        plugin_info: pluginInfo.optional().describe('The plugin that collects the costs: required for EXTERNAL, ignored for LOCAL and WAREHOUSE (as upstream).'),
        warehouse_info: warehouseInfo.optional().describe('The warehouse of a WAREHOUSE data source (its `type` required); ignored for other types.'),
        schedule: scheduleInput.optional(),
        tags: tags.optional(),
        resource_group: z.enum(['DOMAIN', 'WORKSPACE']),
        workspace_id: id.optional(),
      }),
      response: CostDataSourceInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, CALLS_PLUGIN, { 409: ['ERROR_NOT_UNIQUE'] }),
      handler: (input, { auth }) => service.register(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/data-source/update',
      access: write,
      schema: request({
        data_source_id: id,
        name: name.optional(),
        secret_filter: struct.optional(),
        template: struct.optional().describe('The template of a LOCAL data source; refused for the others (ERROR_NOT_ALLOW_PLUGIN_SETTINGS), as upstream.'),
        schedule: scheduleInput.optional(),
        tags: tags.optional(),
      }),
      response: CostDataSourceInfo,
      errors: mergeErrors(NOT_FOUND, NO_PLUGIN_SETTINGS, { 409: ['ERROR_NOT_UNIQUE'] }),
      handler: (input, { auth }) => service.update(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/data-source/update-plugin',
      access: write,
      schema: request({ data_source_id: id, version: z.string().trim().min(1).max(64).optional(), options: struct.optional(), upgrade_mode: upgrade_mode.optional() }),
      response: CostDataSourceInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, CALLS_PLUGIN, NO_PLUGIN_SETTINGS),
      handler: (input, { auth }) => service.updatePlugin(auth, input),
    }),
    idOperation({
      path: '/cost-analysis/v1/data-source/verify-plugin',
      access: write,
      id: { data_source_id: id },
      response: Empty,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, CALLS_PLUGIN, NO_PLUGIN_SETTINGS),
      call: (auth, dataSourceId) => service.verifyPlugin(auth, dataSourceId),
    }),
    idOperation({
      path: '/cost-analysis/v1/data-source/enable',
      access: write,
      id: { data_source_id: id },
      response: CostDataSourceInfo,
      call: (auth, dataSourceId) => service.setState(auth, dataSourceId, 'ENABLED'),
    }),
    idOperation({
      path: '/cost-analysis/v1/data-source/disable',
      access: write,
      id: { data_source_id: id },
      response: CostDataSourceInfo,
      call: (auth, dataSourceId) => service.setState(auth, dataSourceId, 'DISABLED'),
    }),
    idOperation({
      path: '/cost-analysis/v1/data-source/deregister',
      access: write,
      id: { data_source_id: id },
      // Upstream: "Default value is true". proto3 cannot tell `false` from not set, and upstream reads
      // both as the default, so `false` cascades too (docs/decisions/cost-analysis.md).
      fields: { cascade_delete_cost: z.boolean().optional() },
      response: Empty,
      call: (auth, _dataSourceId, input) => service.deregister(auth, input),
    }),
    operation({
      path: '/cost-analysis/v1/data-source/sync',
      access: write,
      schema: request({ data_source_id: id, start: z.string().max(64).optional(), no_preload_cache: z.boolean().optional() }),
      response: JobInfo,
      errors: mergeErrors(NOT_FOUND, NO_SYNC, CALLS_PLUGIN, { 400: ['ERROR_DATA_SOURCE_STATE'], 409: ['ERROR_DUPLICATE_JOB'] }),
      handler: (input, { auth }) => service.sync(auth, input),
    }),
    idOperation({
      path: '/cost-analysis/v1/data-source/get',
      access: read,
      id: { data_source_id: id },
      response: CostDataSourceInfo,
      call: (auth, dataSourceId) => service.get(auth, dataSourceId),
    }),
    operation({
      path: '/cost-analysis/v1/data-source/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        data_source_id: z.string().optional(),
        name: z.string().optional(),
        state: z.enum(['ENABLED', 'DISABLED']).optional(),
        data_source_type: dataSourceType.optional().describe('Only data sources of this type (WAREHOUSE included, beyond upstream\'s query enum).'),
        provider: z.string().optional(),
        // upstream's DataSourceQuery has it (DOMAIN data sources shared with a workspace); we do not share
        // data sources that way yet: accepted empty, as proto3 clients send it, refused otherwise.
        connected_workspace_id: z.string().max(0, 'not supported by this platform yet').optional(),
        workspace_id: z.string().optional(),
      }),
      response: CostDataSourcesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/cost-analysis/v1/data-source/stat', read, service),
  ];
}
