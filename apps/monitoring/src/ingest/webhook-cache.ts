import type { Pool } from 'pg';
import { repeatFilter, type Logger } from '@platform/core';
import { isDependencyUnavailable } from '@platform/http';
import { keyDigest, type IngestWebhook } from './ingest-webhook';
import type { WebhookCopy } from './webhook-copy';

export { keyDigest, type IngestWebhook } from './ingest-webhook';

export interface WebhookCacheOptions {
  ttlMs: number;
  /** A PostgreSQL read slower than this counts as PostgreSQL being down: the copy answers. */
  lookupTimeoutMs?: number;
  /** After PostgreSQL failed, lookups go straight to the copy this long before PostgreSQL is tried again. */
  recheckMs?: number;
  maxEntries?: number;
  logger?: Logger;
}

/** PostgreSQL did not answer a lookup within its timeout. */
class LookupTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LookupTimeout(`webhook lookup timed out after ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * The webhooks the accepting path reads, by webhook_id (unique across domains), kept for a short
 * time so a burst of deliveries costs one read. Read from PostgreSQL; when PostgreSQL is unreachable
 * (a dependency fault, or no answer within `lookupTimeoutMs`), from the webhook copy in Redis
 * (webhook-copy.ts), and straight from the copy for `recheckMs` after that. Entries are dropped at
 * once by a write in this process and, through the copy's channel, by a write in any other replica;
 * should a message be missed, an entry lives `ttlMs` at most.
 */
export class WebhookCache {
  private entries = new Map<string, { webhook: IngestWebhook | null; expires: number }>();
  private postgresDownUntil = 0;
  /** Bumped by every invalidation: a read that began before one is not cached. */
  private generation = 0;
  private readonly fallbacks = repeatFilter();
  private readonly lookupTimeoutMs: number;
  private readonly recheckMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly pool: Pool,
    private readonly o: WebhookCacheOptions,
    private readonly copy?: WebhookCopy,
  ) {
    this.lookupTimeoutMs = o.lookupTimeoutMs ?? 1000;
    this.recheckMs = o.recheckMs ?? 1000;
    this.maxEntries = o.maxEntries ?? 10_000;
    copy?.onChange((id) => {
      if (id === '*') {
        this.generation++;
        this.entries.clear();
      } else this.invalidate(id);
    });
  }

  async get(webhookId: string): Promise<IngestWebhook | null> {
    return this.peek(webhookId) ?? this.load(webhookId);
  }

  /** The webhook when it was read recently (no I/O); undefined otherwise. */
  peek(webhookId: string): IngestWebhook | undefined {
    const hit = this.entries.get(webhookId);
    return hit && hit.expires > Date.now() && hit.webhook ? hit.webhook : undefined;
  }

  /** Reads the webhook (PostgreSQL, or the copy), whatever is cached, and caches it when found. */
  async load(webhookId: string): Promise<IngestWebhook | null> {
    const now = Date.now();
    const generation = this.generation;
    const webhook = await this.read(webhookId, now);
    if (generation !== this.generation) return webhook;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    if (this.o.ttlMs > 0 && webhook) this.entries.set(webhookId, { webhook, expires: now + this.o.ttlMs });
    return webhook;
  }

  private async read(webhookId: string, now: number): Promise<IngestWebhook | null> {
    if (this.copy && now < this.postgresDownUntil) return this.copy.get(webhookId);
    try {
      return await withTimeout(this.fromPostgres(webhookId), this.lookupTimeoutMs);
    } catch (e) {
      if (!this.copy || !(e instanceof LookupTimeout || isDependencyUnavailable(e))) throw e;
      const message = String((e as Error)?.message ?? e).split('\n')[0].slice(0, 300);
      const repeats = this.fallbacks(message);
      if (repeats >= 0) this.o.logger?.warn({ err: message, ...(repeats && { repeats }) }, 'webhook lookup: PostgreSQL unavailable, reading the Redis copy');
      this.postgresDownUntil = Date.now() + this.recheckMs;
      return this.copy.get(webhookId);
    }
  }

  private async fromPostgres(webhookId: string): Promise<IngestWebhook | null> {
    const { rows } = await this.pool.query<Omit<IngestWebhook, 'key_digest'> & { access_key: string }>(
      `SELECT webhook_id, name, domain_id, workspace_id, project_id, state, access_key, plugin_info FROM webhook WHERE webhook_id = $1`,
      [webhookId],
    );
    if (!rows[0]) return null;
    const { access_key, ...w } = rows[0];
    return { ...w, key_digest: keyDigest(access_key) };
  }

  invalidate(webhookId: string): void {
    this.generation++;
    this.entries.delete(webhookId);
  }
}
