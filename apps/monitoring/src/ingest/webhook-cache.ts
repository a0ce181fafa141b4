import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { StoredPluginInfo } from '../plugins/plugin-info';

export interface IngestWebhook {
  webhook_id: string;
  name: string;
  domain_id: string;
  workspace_id: string;
  project_id: string;
  state: string;
  access_key: string;
  plugin_info: StoredPluginInfo;
  /** keyDigest(access_key), computed once per read rather than once per delivery. */
  key_digest: Buffer;
}

/** SHA-256 of an access key: keys are compared as digests (see sameKey). */
export const keyDigest = (key: string) => createHash('sha256').update(key).digest();

/**
 * The webhooks the accepting path reads, by webhook_id (unique across domains), kept for a short
 * time so a burst of deliveries costs one database read. Webhook writes in this process drop their
 * entry at once; other replicas see a change within `ttlMs`.
 */
export class WebhookCache {
  private entries = new Map<string, { webhook: IngestWebhook | null; expires: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(webhookId: string): Promise<IngestWebhook | null> {
    const now = Date.now();
    const hit = this.entries.get(webhookId);
    if (hit && hit.expires > now) return hit.webhook;
    const { rows } = await this.pool.query<Omit<IngestWebhook, 'key_digest'>>(
      `SELECT webhook_id, name, domain_id, workspace_id, project_id, state, access_key, plugin_info FROM webhook WHERE webhook_id = $1`,
      [webhookId],
    );
    const webhook = rows[0] ? { ...rows[0], key_digest: keyDigest(rows[0].access_key) } : null;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    if (this.ttlMs > 0 && webhook) this.entries.set(webhookId, { webhook, expires: now + this.ttlMs });
    return webhook;
  }

  invalidate(webhookId: string): void {
    this.entries.delete(webhookId);
  }
}
