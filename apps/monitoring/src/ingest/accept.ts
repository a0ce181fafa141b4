import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { Logger } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import type { Struct } from '../plugins/registry';
import type { DeliveryEnqueuer } from './enqueue';
import type { DeliveryJob } from './job';
import { keyDigest, type IngestWebhook, type WebhookCache } from './webhook-cache';

/** The key check in constant time: neither the content nor the length of the real key leaks through timing. */
export function sameKey(given: string, actualDigest: Buffer): boolean {
  return timingSafeEqual(keyDigest(given), actualDigest);
}

/**
 * Accepting a delivery (the webhook URL and event/create): the webhook must exist, the key match and
 * the webhook be enabled; then the payload is enqueued and the caller answered. Nothing is parsed
 * or stored here — the worker does that, exactly once per accepted delivery. When the queue cannot
 * take the payload the caller gets 503 (so it retries), never a 2xx.
 */
export class IngestService {
  constructor(
    private readonly webhooks: WebhookCache,
    private readonly queue: DeliveryEnqueuer,
    private readonly logger: Logger,
  ) {}

  private async authorize(webhookId: string, accessKey: string): Promise<IngestWebhook> {
    let webhook: IngestWebhook | null;
    try {
      webhook = await this.webhooks.get(webhookId);
    } catch (e) {
      this.logger.error({ err: (e as Error).message }, 'webhook lookup failed');
      throw errors.unavailable('Webhook store unavailable; retry later.');
    }
    if (!webhook) throw new ApiError(404, 'ERROR_NOT_FOUND', `Webhook not found, or deleted. (webhook_id = ${webhookId})`, { key: 'webhook_id' });
    if (!sameKey(accessKey, webhook.key_digest)) throw errors.permissionDenied('Permission denied: wrong access key.');
    if (webhook.state !== 'ENABLED') {
      throw new ApiError(400, 'ERROR_WEBHOOK_STATE_DISABLED', `Webhook state is disabled. (webhook_id = ${webhookId})`);
    }
    return webhook;
  }

  /** Returns the delivery id once the payload is in the queue. `bytes`: the size of the posted payload. */
  async accept(webhookId: string, accessKey: string, data: Struct, bytes: number): Promise<string> {
    const w = await this.authorize(webhookId, accessKey);
    const delivery_id = randomUUID();
    const job: DeliveryJob = {
      delivery_id,
      received_at: new Date().toISOString(),
      webhook: {
        webhook_id: w.webhook_id,
        name: w.name,
        domain_id: w.domain_id,
        workspace_id: w.workspace_id,
        project_id: w.project_id,
        plugin_id: w.plugin_info.plugin_id,
        version: w.plugin_info.version,
        upgrade_mode: w.plugin_info.upgrade_mode,
        options: w.plugin_info.options ?? {},
      },
      data,
    };
    await this.queue.enqueue(job, bytes);
    return delivery_id;
  }
}
