import { randomUUID, timingSafeEqual } from 'node:crypto';
import { repeatFilter, type Logger } from '@platform/core';
import { errors } from '@platform/errors';
import { injectTrace } from '@platform/telemetry';
import type { Struct } from '../plugins/registry';
import type { DeliveryEnqueuer } from './enqueue';
import type { DeliveryJob } from './job';
import { keyDigest, type IngestWebhook, type WebhookCache } from './webhook-cache';

/** The key check in constant time: neither the content nor the length of the real key leaks through timing. */
export function sameKey(given: string, actualDigest: Buffer): boolean {
  return timingSafeEqual(keyDigest(given), actualDigest);
}

/** Compared against when the webhook does not exist, so an unknown id costs the same as a wrong key. */
const NO_WEBHOOK_DIGEST = keyDigest(randomUUID());
const MAX_ID = 255;

/** An unknown webhook and a wrong key answer alike: ids cannot be probed. */
const denied = () => errors.permissionDenied('Permission denied: unknown webhook or wrong access key.');

/** Past the key check: only an enabled webhook takes deliveries (only the right key learns its state). */
function enabled(webhook: IngestWebhook, webhookId: string): IngestWebhook {
  if (webhook.state !== 'ENABLED') throw errors.wrongState('ERROR_WEBHOOK_STATE_DISABLED', `Webhook state is disabled. (webhook_id = ${webhookId})`);
  return webhook;
}

/**
 * Accepting a delivery (the webhook URL and event/create): the webhook must exist, the key match and
 * the webhook be enabled; then the payload is enqueued and the caller answered. Nothing is parsed
 * or stored here — the worker does that, exactly once per accepted delivery. When the queue cannot
 * take the payload the caller gets 503 (so it retries), never a 2xx.
 */
export class IngestService {
  /** During a database outage every delivery fails its lookup: one line every 30 s says so. */
  private readonly lookupFailures = repeatFilter();

  constructor(
    private readonly webhooks: WebhookCache,
    private readonly queue: DeliveryEnqueuer,
    private readonly logger: Logger,
    /** The key comparison (sameKey); a test passes one that records its calls. */
    private readonly compare: (given: string, actualDigest: Buffer) => boolean = sameKey,
  ) {}

  /**
   * The webhook a delivery is for, when the key is its key: checked from the URL (or the operation's
   * fields) before a byte of the payload is read. Unknown id and wrong key are the same 403, after the
   * same work (issue #32): a right key to a webhook read recently is accepted from the cache; every
   * other call compares against the cached digest (a dummy when none), reads the webhook (an unknown id
   * is never cached, so a known one is not trusted from the cache for a refusal either) and compares
   * against its digest (a dummy when there is none). A known id with a wrong key and an unknown id thus
   * each cost one read and two comparisons, cached or not.
   */
  async authorize(webhookId: string, accessKey: string): Promise<IngestWebhook> {
    // An id no webhook can have (too long, or a NUL PostgreSQL cannot even compare) is unknown at once.
    if (webhookId.length > MAX_ID || accessKey.length > MAX_ID || webhookId.includes('\u0000')) throw denied();
    const recent = this.webhooks.peek(webhookId);
    const recentMatches = this.compare(accessKey, recent?.key_digest ?? NO_WEBHOOK_DIGEST);
    if (recent && recentMatches) return enabled(recent, webhookId);
    const webhook = await this.lookup(webhookId);
    const keyMatches = this.compare(accessKey, webhook?.key_digest ?? NO_WEBHOOK_DIGEST);
    if (!webhook || !keyMatches) throw denied();
    return enabled(webhook, webhookId);
  }

  private async lookup(webhookId: string): Promise<IngestWebhook | null> {
    try {
      return await this.webhooks.load(webhookId);
    } catch (e) {
      const message = String((e as Error)?.message ?? e).split('\n')[0].slice(0, 300);
      const repeats = this.lookupFailures(message);
      if (repeats >= 0) this.logger.warn({ err: message, ...(repeats && { repeats }) }, 'webhook lookup failed');
      throw errors.unavailable('Webhook store unavailable; retry later.');
    }
  }

  /** Returns the delivery id once the payload is in the queue. `bytes`: the size of the posted payload. */
  async accept(w: IngestWebhook, data: Struct, bytes: number): Promise<string> {
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
    // Deliveries of many requests share a job: each carries its own request's trace.
    const trace = injectTrace();
    if (trace) job.trace = trace;
    await this.queue.enqueue(job, bytes);
    return delivery_id;
  }
}
