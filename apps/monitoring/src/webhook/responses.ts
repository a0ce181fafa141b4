import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { StoredPluginInfo } from '../plugins/plugin-info';
import { UPGRADE_MODES, type Struct } from '../plugins/registry';
import type { WebhookRow } from './repository';

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

/** A row as WebhookInfo: plugin_info as the contract has it, the counters as numbers, an ISO created_at. */
export function toWebhookInfo(r: WebhookRow) {
  const p = (r.plugin_info ?? {}) as StoredPluginInfo;
  return {
    webhook_id: r.webhook_id,
    name: r.name,
    state: r.state,
    access_key: r.access_key,
    webhook_url: r.webhook_url,
    capability: (r.capability ?? {}) as Struct,
    plugin_info: { plugin_id: p.plugin_id, version: p.version, options: p.options ?? {}, metadata: p.metadata ?? {}, upgrade_mode: p.upgrade_mode },
    tags: (r.tags ?? {}) as Struct,
    requests: { total: Number(r.requests_total ?? 0), error: Number(r.requests_error ?? 0) },
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    created_at: isoOrEmpty(r.created_at),
  };
}
