import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Logger } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import type { Queue } from '@platform/queue';
import type { Struct } from '../plugins/registry';
import { DELIVERY_JOB_NAME, DELIVERY_JOB_OPTIONS, type DeliveryJob } from './job';
import type { IngestWebhook, WebhookCache } from './webhook-cache';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The key check in constant time: neither the content nor the length of the real key leaks through timing. */
export function sameKey(given: string, actual: string): boolean {
  return timingSafeEqual(digest(given), digest(actual));
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]);
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
    private readonly queue: Queue<DeliveryJob>,
    private readonly enqueueTimeoutMs: number,
    private readonly logger: Logger,
    /** False while the queue's Redis connection is down: answer 503 at once. */
    private readonly queueReady: () => boolean = () => true,
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
    if (!sameKey(accessKey, webhook.access_key)) throw errors.permissionDenied('Permission denied: wrong access key.');
    if (webhook.state !== 'ENABLED') {
      throw new ApiError(400, 'ERROR_WEBHOOK_STATE_DISABLED', `Webhook state is disabled. (webhook_id = ${webhookId})`);
    }
    return webhook;
  }

  /** Returns the delivery id once the payload is in the queue. */
  async accept(webhookId: string, accessKey: string, data: Struct): Promise<string> {
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
    if (!this.queueReady()) throw errors.unavailable('Event queue unavailable; the delivery was not accepted, retry later.');
    try {
      await withTimeout(this.queue.add(DELIVERY_JOB_NAME, job, { jobId: delivery_id, ...DELIVERY_JOB_OPTIONS }), this.enqueueTimeoutMs);
    } catch (e) {
      this.logger.error({ err: (e as Error).message, webhook_id: webhookId }, 'enqueue failed');
      throw errors.unavailable('Event queue unavailable; the delivery was not accepted, retry later.');
    }
    return delivery_id;
  }
}
