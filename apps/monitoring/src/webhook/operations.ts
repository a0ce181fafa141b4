import { z } from 'zod';
import { WORKSPACE_ROLES, type RoleType } from '@platform/auth';
import { Empty, id, idOperation, mergeErrors, name, NOT_FOUND, operation, QUERY_ERRORS, request, statOperation, struct, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import { PLUGIN_CALL_ERRORS, pluginInfoRequest, pluginVersion, upgradeMode } from '../plugin-schema';
import type { WebhookService } from './service';
import { WebhookInfo, WebhooksInfo } from './responses';
/** Codes of choosing and checking a plugin. */
const PLUGIN_ERRORS = { 400: ['ERROR_INVALID_PLUGIN_VERSION', 'ERROR_PLUGIN_VERIFY_FAILED'] };

// Upstream: WORKSPACE_OWNER and WORKSPACE_MEMBER write; DOMAIN_ADMIN also reads.
const write = { permission: 'monitoring:Webhook.write', roles: ['WORKSPACE_OWNER', 'WORKSPACE_MEMBER'] as RoleType[] };
const read = { permission: 'monitoring:Webhook.read', roles: WORKSPACE_ROLES };

export function webhookOperations(service: WebhookService) {
  return [
    operation({
      path: '/monitoring/v1/webhook/create',
      access: write,
      schema: request({ name, plugin_info: z.strictObject(pluginInfoRequest), project_id: id, tags: tags.optional() }),
      response: WebhookInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      handler: (input, { auth }) => service.create(auth, input),
    }),
    operation({
      path: '/monitoring/v1/webhook/update',
      access: write,
      schema: request({ webhook_id: id, name: name.optional(), tags: tags.optional() }),
      response: WebhookInfo,
      errors: NOT_FOUND,
      handler: (input, { auth }) => service.update(auth, input),
    }),
    operation({
      path: '/monitoring/v1/webhook/update-plugin',
      access: write,
      schema: request({ webhook_id: id, version: pluginVersion.optional(), options: struct.optional(), upgrade_mode: upgradeMode.optional() }),
      response: WebhookInfo,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      handler: (input, { auth }) => service.updatePlugin(auth, input),
    }),
    idOperation({
      path: '/monitoring/v1/webhook/verify-plugin',
      access: write,
      id: { webhook_id: id },
      response: Empty,
      errors: mergeErrors(NOT_FOUND, PLUGIN_ERRORS, PLUGIN_CALL_ERRORS),
      call: (auth, webhookId) => service.verifyPlugin(auth, webhookId),
    }),
    idOperation({
      path: '/monitoring/v1/webhook/enable',
      access: write,
      id: { webhook_id: id },
      response: WebhookInfo,
      call: (auth, webhookId) => service.setState(auth, webhookId, 'ENABLED'),
    }),
    idOperation({
      path: '/monitoring/v1/webhook/disable',
      access: write,
      id: { webhook_id: id },
      response: WebhookInfo,
      call: (auth, webhookId) => service.setState(auth, webhookId, 'DISABLED'),
    }),
    idOperation({
      path: '/monitoring/v1/webhook/delete',
      access: write,
      id: { webhook_id: id },
      response: Empty,
      call: (auth, webhookId) => service.delete(auth, webhookId),
    }),
    idOperation({
      path: '/monitoring/v1/webhook/get',
      access: read,
      id: { webhook_id: id },
      response: WebhookInfo,
      call: (auth, webhookId) => service.get(auth, webhookId),
    }),
    operation({
      path: '/monitoring/v1/webhook/list',
      access: read,
      schema: request({
        query: QuerySchema.optional(),
        webhook_id: z.string().optional(),
        name: z.string().optional(),
        // upstream's WebhookQuery.WebhookState enum: its zero NONE (a proto3 client's unset) is not a filter
        state: z.enum(['ENABLED', 'DISABLED']).optional(),
        access_key: z.string().optional(),
        workspace_id: z.string().optional(),
        project_id: z.string().optional(),
      }),
      response: WebhooksInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/monitoring/v1/webhook/stat', read, service),
  ];
}
