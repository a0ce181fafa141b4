import { z } from 'zod';
import { Empty, idOperation, NOT_FOUND, operation, QUERY_ERRORS, request as platformRequest } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { PLUGIN_STATES, PluginEndpoint, PluginsInfo, SupervisorInfo, SupervisorsInfo } from './responses';
import type { SupervisorService } from './service';

// Supervisors and endpoints are the domain's infrastructure: DOMAIN_ADMIN only, with a domain-scoped
// token (workspace tokens are refused). A public supervisor needs the operator's domain (see service).
const write = { permission: 'plugin:Supervisor.write', roles: ['DOMAIN_ADMIN'] as const };
const read = { permission: 'plugin:Supervisor.read', roles: ['DOMAIN_ADMIN'] as const };
const resolve = { permission: 'plugin:Plugin.read', roles: ['DOMAIN_ADMIN'] as const };

const PLUGIN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]*$/;
const pluginId = z.string().max(255).regex(PLUGIN_ID, 'letters, digits and . _ : -');
const version = z.string().max(64).regex(VERSION, 'letters, digits and . + _ -');
const endpoint = z.string().max(512);
const text = (max: number) => z.string().trim().min(1).max(max);

const PublishedPlugin = z.strictObject({
  plugin_id: pluginId.describe('The plugin’s id, as upstream’s repository names it.'),
  version: version.describe('The version of the plugin’s image.'),
  state: z
    .enum(PLUGIN_STATES)
    .default('ACTIVE')
    .transform((v) => (v === 'NONE' ? 'ACTIVE' : v)) // NONE: proto3's "not set"
    .describe('The container’s state (ACTIVE when absent or NONE); only ACTIVE versions are resolved.'),
  endpoint: endpoint.default('').describe('Where it answers: grpc://host:port or grpcs://host:port (TLS); required when ACTIVE.'),
  endpoints: z.array(endpoint).max(16).default([]).describe('Every replica’s endpoint, in the same form (at most 16).'),
  managed: z.boolean().optional().describe('Accepted for upstream’s supervisors and ignored: the platform runs no container itself.'),
  // The rest of upstream's PluginInfo message, as a proto3 client sends it: empty only (the token and the supervisor decide them).
  domain_id: z.string().max(0).optional().describe('Part of upstream’s PluginInfo; accepted empty only.'),
  supervisor_id: z.string().max(0).optional().describe('Part of upstream’s PluginInfo; accepted empty only.'),
  supervisor_name: z.string().max(0).optional().describe('Part of upstream’s PluginInfo; accepted empty only.'),
});

const labels = z.array(z.string().max(255)).max(50);
const tags = z
  .record(z.string().max(255), z.unknown())
  .refine((t) => Object.keys(t).length <= 100, 'at most 100 tags')
  .refine((t) => JSON.stringify(t).length <= 16_384, 'at most 16 KiB of tags');

/** A request of this module: libs/http's, with domain_id described (given to `idOperation` as one of its fields). */
const domainId = z.string().max(255).optional().describe('The caller’s domain; optional, and refused when it is not the token’s.');
const request = <T extends z.ZodRawShape>(shape: T) => platformRequest({ domain_id: domainId, ...shape });

const supervisorId = z.string().trim().min(1).max(255).describe('The supervisor’s id.');

export function supervisorOperations(service: SupervisorService) {
  return [
    operation({
      path: '/plugin/v1/supervisor/publish',
      summary: 'Records a supervisor and where each of its plugin containers answers, replacing what it published before.',
      access: write,
      schema: request({
        name: text(255).describe('The supervisor’s name.'),
        hostname: text(253).describe('The host it runs on: a publish from the same hostname updates the same supervisor.'),
        secret_key: z.string().min(1).max(1024).describe('The supervisor’s secret: kept as a digest, required to publish again from the same hostname, never answered.'),
        plugin_info: z.array(PublishedPlugin).max(200).default([]).describe('Every plugin version it runs now (at most 200); those left out are removed.'),
        is_public: z.boolean().default(false).describe('Its plugins serve every domain; only the operator’s domain may publish one.'),
        labels: labels.default([]).describe('Free labels (at most 50 strings).'),
        tags: tags.default({}).describe('Free tags (at most 100 keys, 16 KiB).'),
      }),
      response: SupervisorInfo,
      errors: { 403: ['ERROR_PERMISSION_DENIED'], 409: ['ERROR_ALREADY_EXISTS'], 503: ['ERROR_SERVICE_UNAVAILABLE'] },
      handler: (input, { auth }) => service.publish(auth, input),
    }),
    idOperation({
      path: '/plugin/v1/supervisor/get',
      summary: 'Answers one supervisor of the caller’s domain.',
      access: read,
      id: { supervisor_id: supervisorId },
      fields: { domain_id: domainId },
      response: SupervisorInfo,
      call: (auth, supervisor) => service.get(auth, supervisor),
    }),
    operation({
      path: '/plugin/v1/supervisor/list',
      summary: 'Lists the supervisors of the caller’s domain.',
      access: read,
      schema: request({
        query: QuerySchema.optional().describe('The query DSL: filter, sort, page, only, keyword.'),
        supervisor_id: supervisorId.optional(),
        name: z.string().max(255).optional().describe('Only the supervisors of this name.'),
        is_public: z.boolean().optional().describe('Only the public (true) or the domain’s own (false) supervisors.'),
      }),
      response: SupervisorsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    operation({
      path: '/plugin/v1/supervisor/list-plugins',
      summary: 'Lists the plugin versions the supervisors of the caller’s domain published.',
      access: read,
      schema: request({
        query: QuerySchema.optional().describe('The query DSL: filter, sort, page, only, keyword.'),
        supervisor_id: supervisorId.optional(),
        hostname: z.string().max(253).optional().describe('Only the plugins of the supervisor on this host.'),
        plugin_id: z.string().max(255).optional().describe('Only this plugin.'),
        version: z.string().max(64).optional().describe('Only this version.'),
        state: z.enum(PLUGIN_STATES).optional().describe('Only the plugins in this state.'),
        endpoint: endpoint.optional().describe('Only the plugins answering at this endpoint.'),
      }),
      response: PluginsInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.listPlugins(auth, input),
    }),
    idOperation({
      path: '/plugin/v1/supervisor/deregister',
      summary: 'Removes a supervisor and its plugins; every module stops using their endpoints at once.',
      access: write,
      id: { supervisor_id: supervisorId },
      fields: { domain_id: domainId },
      response: Empty,
      errors: { ...NOT_FOUND, 503: ['ERROR_SERVICE_UNAVAILABLE'] },
      call: (auth, supervisor) => service.deregister(auth, supervisor),
    }),
    operation({
      path: '/plugin/v1/plugin/get-plugin-endpoint',
      summary: 'Answers where a plugin answers for the caller’s domain: the version asked for (MANUAL) or the newest published (AUTO).',
      access: resolve,
      schema: request({
        plugin_id: pluginId.describe('The plugin’s id.'),
        version: version.optional().describe('The version asked for; required with MANUAL.'),
        upgrade_mode: z
          .enum(['AUTO', 'MANUAL'])
          .optional()
          .describe('AUTO: the newest ACTIVE version (semantic-version order); MANUAL: exactly the version asked for. Default MANUAL with a version, AUTO without.'),
        labels: z.strictObject({}).optional().describe('Accepted empty only, for upstream’s clients: labels do not choose a supervisor.'),
      }),
      response: PluginEndpoint,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.endpoint(auth, input),
    }),
  ];
}
