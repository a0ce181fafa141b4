import { z } from 'zod';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import { AnalyzeResult, Empty, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, stringList, struct, tags } from '@platform/http';
import { AnalyzeQuerySchema, ConditionSchema, KeySchema, PageSchema, QUERY_LIMITS, QuerySchema, SortSchema, UnwindSchema } from '@platform/query';
import type { CloudServiceExporter } from '../export/service';
import type { CloudServiceService } from './service';
import { CloudServiceInfo, CloudServicesInfo, ExportInfo } from './responses';

// upstream: writes need a workspace role (WORKSPACE_OWNER or WORKSPACE_MEMBER); reads also allow DOMAIN_ADMIN.
const write = { permission: 'inventory:CloudService.write', roles: ['WORKSPACE_OWNER', 'WORKSPACE_MEMBER'] as RoleType[] };
const read = { permission: 'inventory:CloudService.read', roles: WORKSPACE_ROLES };

const text = z.string().max(255);
const reference = z.strictObject({ resource_id: z.string().max(1024).optional(), external_link: z.string().max(2048).optional() });
const attributes = {
  name: text.optional(),
  account: text.optional(),
  instance_type: text.optional(),
  instance_size: z.number().finite().optional(),
  ip_addresses: stringList.optional(),
  metadata: struct.optional(),
  reference: reference.optional(),
  tags: tags.optional(),
  region_code: text.optional(),
  project_id: id.optional(),
};

const filters = z.array(ConditionSchema).max(QUERY_LIMITS.conditions).nullish();
/** upstream's ExportField: a key, or {key, name, type, options{prefix, postfix, default, source_unit}, reference}. */
const exportField = z.union([
  KeySchema,
  z.strictObject({
    key: KeySchema,
    name: z.string().max(255).optional(),
    type: z.string().max(64).optional(),
    options: z
      .strictObject({ prefix: z.string().optional(), postfix: z.string().optional(), default: z.unknown().optional(), source_unit: z.string().optional() })
      .optional(),
    reference: z.strictObject({ resource_type: z.string().optional(), reference_key: z.string().optional() }).optional(),
  }),
]);
const common = { filter: filters, filter_or: filters, keyword: z.string().max(QUERY_LIMITS.keyword).nullish(), sort: SortSchema.nullish(), page: PageSchema.nullish() };
/** ExportOption of spaceone.api.core.v2 (query.proto): SEARCH takes search_query, ANALYZE analyze_query. */
const exportOption = z.strictObject({
  name: z.string().trim().min(1).max(255),
  title: z.string().max(255).optional(),
  query_type: z.enum(['SEARCH', 'ANALYZE']),
  search_query: z.strictObject({ ...common, fields: z.array(exportField).max(500).optional(), unwind: UnwindSchema.nullish() }).optional(),
  analyze_query: z
    .strictObject({
      ...common,
      group_by: AnalyzeQuerySchema.shape.group_by,
      fields: AnalyzeQuerySchema.shape.fields,
      select: AnalyzeQuerySchema.shape.select,
    })
    .optional(),
});

export function cloudServiceOperations(service: CloudServiceService, exporter: CloudServiceExporter) {
  return [
    operation({
      path: '/inventory/v1/cloud-service/create',
      access: write,
      schema: request({ cloud_service_type: name, provider: name, cloud_service_group: name, data: struct, ...attributes }),
      response: CloudServiceInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/inventory/v1/cloud-service/update',
      access: write,
      schema: request({ cloud_service_id: id, data: struct.optional(), ...attributes }),
      response: CloudServiceInfo,
      errors: mergeErrors(NOT_FOUND, { 400: ['ERROR_RESOURCE_ALREADY_DELETED'] }),
      handler: (input, { auth }) => service.update(auth, input),
    }),
    idOperation({
      path: '/inventory/v1/cloud-service/delete',
      access: write,
      id: { cloud_service_id: id },
      response: Empty,
      errors: mergeErrors(NOT_FOUND, { 400: ['ERROR_RESOURCE_ALREADY_DELETED'] }),
      call: (auth, cloudServiceId) => service.delete(auth, cloudServiceId),
    }),
    idOperation({
      path: '/inventory/v1/cloud-service/get',
      access: read,
      id: { cloud_service_id: id },
      response: CloudServiceInfo,
      call: (auth, cloudServiceId) => service.get(auth, cloudServiceId),
    }),
    operation({
      path: '/inventory/v1/cloud-service/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        cloud_service_id: z.string().optional(),
        name: z.string().optional(),
        state: z.string().optional(),
        ip_address: z.string().optional(),
        account: z.string().optional(),
        instance_type: z.string().optional(),
        cloud_service_type: z.string().optional(),
        cloud_service_group: z.string().optional(),
        provider: z.string().optional(),
        region_code: z.string().optional(),
        workspace_id: z.string().optional(),
        project_id: z.string().optional(),
        project_group_id: z.string().optional(),
      }),
      response: CloudServicesInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    operation({
      path: '/inventory/v1/cloud-service/export',
      access: read,
      schema: request({
        options: z.array(exportOption).min(1).max(100),
        file_format: z.enum(['EXCEL', 'CSV']).optional(),
        file_name: z.string().trim().min(1).max(200).optional(),
        timezone: z.string().max(64).optional(),
      }),
      response: ExportInfo,
      errors: mergeErrors(QUERY_ERRORS, { 400: ['ERROR_NO_DATA_TO_EXPORT'], 429: ['ERROR_TOO_MANY_EXPORTS'] }),
      handler: (input, { auth }) => exporter.request(auth, input),
    }),
    operation({
      path: '/inventory/v1/cloud-service/analyze',
      access: read,
      schema: request({ query: AnalyzeQuerySchema }),
      response: AnalyzeResult,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.analyze(auth, input.query),
    }),
    statOperation('/inventory/v1/cloud-service/stat', read, service),
  ];
}
