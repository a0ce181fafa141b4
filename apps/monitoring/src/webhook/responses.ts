import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';
import { UPGRADE_MODES } from '../plugins/registry';

/** WebhookPluginInfo (the contract). */
export const WebhookPluginInfo = z
  .strictObject({ plugin_id: z.string(), version: z.string(), options: structOut, metadata: structOut, upgrade_mode: z.enum(UPGRADE_MODES) })
  .meta({ id: 'WebhookPluginInfo' });

/** WebhookInfo (the contract): `requests` counts the deliveries received and those that failed. */
export const WebhookInfo = z
  .strictObject({
    webhook_id: z.string(),
    name: z.string(),
    state: z.enum(['ENABLED', 'DISABLED']),
    access_key: z.string(),
    webhook_url: z.string(),
    capability: structOut,
    plugin_info: WebhookPluginInfo,
    tags: structOut,
    requests: z.strictObject({ total: z.number().int(), error: z.number().int() }).meta({ id: 'WebhookRequests' }),
    domain_id: z.string(),
    workspace_id: z.string(),
    project_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'WebhookInfo' });

export const WebhooksInfo = listOf(WebhookInfo).meta({ id: 'WebhooksInfo' });
