import type Redis from 'ioredis';
import type { Pool } from 'pg';
import { retryWithBackoff, type Logger } from '@platform/core';
import type { StoredPluginInfo } from '../plugins/plugin-info';
import { keyDigest, type IngestWebhook } from './ingest-webhook';

/**
 * The webhooks' copy in Redis: what the webhook URL needs to accept a delivery while PostgreSQL is
 * down (docs/decisions/monitoring.md, "Accepting while PostgreSQL is down").
 *
 * One hash, `<prefix>monitoring:webhooks`, the source of truth of the copy:
 * - field `<webhook_id>`: `<revision> <stamp> <body>`, body = JSON `[name, domain_id, workspace_id,
 *   project_id, state, sha256(access_key) hex, plugin_info]`, or `-` for a deleted webhook (a tombstone);
 *   revision = the row's `revision` (bumped by every change), stamp = Redis' clock (µs) at the write;
 * - field `_`: the stamp at which the last full republish began. Absent, the copy is incomplete (a
 *   Redis that came back empty): it answers nothing, and the URL 503 as before.
 * The access key itself is never in Redis: only its SHA-256 digest.
 *
 * Writers: the webhook service, after each commit (create, update, update-plugin, verify-plugin,
 * enable, disable, delete); a write never replaces a newer revision, nor a tombstone. And a full
 * republish from PostgreSQL at start and whenever the Redis connection comes back, which neither
 * undoes a write made while it ran (newer revision, or stamped after it began) nor keeps an entry
 * whose webhook no longer exists. Each write publishes the webhook id on the channel of the same name
 * (`*` after a republish); every replica drops that id from its in-process cache.
 */
const hashKey = (prefix: string) => `${prefix}monitoring:webhooks`;
const channelName = hashKey;
const COMPLETE = '_';
const DELETED = '-';

/** Writes `id rev body` triples, each unless the entry holds a newer revision or a tombstone; answers the ids written. */
const PUT = `
local now = redis.call('TIME')
local stamp = now[1] .. string.format('%06d', tonumber(now[2]))
local written = {}
for i = 1, #ARGV, 3 do
  local id, rev, body = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local old = redis.call('HGET', KEYS[1], id)
  local keep = false
  if old then
    local r, b = string.match(old, '^(%d+) %d+ (.*)$')
    if r and (b == '${DELETED}' or tonumber(r) > tonumber(rev)) then keep = true end
  end
  if not keep then
    redis.call('HSET', KEYS[1], id, rev .. ' ' .. stamp .. ' ' .. body)
    written[#written + 1] = id
  end
end
return written`;

/** Removes the fields given whose entry was written before ARGV[1] (a stamp): a full republish did not see them. */
const SWEEP = `
local removed = 0
for i = 2, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old then
    local t = string.match(old, '^%d+ (%d+) ')
    if not t or tonumber(t) < tonumber(ARGV[1]) then
      redis.call('HDEL', KEYS[1], ARGV[i])
      removed = removed + 1
    end
  end
end
return removed`;

/** The webhook row's fields the copy is made of: what the URL reads, with the key itself and the revision. */
export type WebhookSource = Omit<IngestWebhook, 'key_digest' | 'plugin_info'> & {
  access_key: string;
  plugin_info: unknown;
  revision: bigint | string | number;
};

const body = (w: WebhookSource) =>
  JSON.stringify([w.name, w.domain_id, w.workspace_id, w.project_id, w.state, keyDigest(w.access_key).toString('hex'), w.plugin_info ?? {}]);

/** A copy entry's revision: digits only (the scripts compare them as numbers). */
const rev = (r: WebhookSource['revision']) => String(BigInt(r ?? 0));

const CHUNK = 500;
const GET_TIMEOUT_MS = 1000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]);
}

export class WebhookCopy {
  private subscriber?: Redis;
  private readonly listeners: ((id: string) => void)[] = [];
  private stopped = false;
  private readonly onReady = () => this.republishSoon();
  private readonly republisher = retryWithBackoff(() => this.republish(), {
    firstMs: 1000,
    onSuccess: (n) => this.o.logger.info({ webhooks: n }, 'webhook copy published'),
    onFailure: (err, retryMs) => this.o.logger.error({ err: err.message, retry_ms: retryMs }, 'webhook copy publish failed; retrying'),
  });

  constructor(
    private readonly redis: Redis,
    private readonly pool: Pool,
    private readonly o: { prefix?: string; logger: Logger },
  ) {}

  private get key() {
    return hashKey(this.o.prefix ?? '');
  }
  private get channel() {
    return channelName(this.o.prefix ?? '');
  }

  /** Called with a webhook id whose entry changed, or `*` when any may have (a republish, a resubscription). */
  onChange(listener: (id: string) => void): void {
    this.listeners.push(listener);
  }

  private notify(id: string) {
    for (const l of this.listeners) l(id);
  }

  /** After a commit that created or changed the webhook. */
  async put(w: WebhookSource): Promise<void> {
    const written = (await this.redis.eval(PUT, 1, this.key, w.webhook_id, rev(w.revision), body(w))) as string[];
    this.notify(w.webhook_id);
    if (written.length) await this.redis.publish(this.channel, w.webhook_id);
  }

  /** After a commit that deleted the webhook: a tombstone, which no later write replaces. */
  async remove(w: { webhook_id: string; revision: WebhookSource['revision'] }): Promise<void> {
    await this.redis.eval(PUT, 1, this.key, w.webhook_id, rev(w.revision), DELETED);
    this.notify(w.webhook_id);
    await this.redis.publish(this.channel, w.webhook_id);
  }

  /**
   * The webhook as the copy has it: null when it does not exist (or was deleted). Throws when the
   * copy cannot answer: Redis not connected or too slow, or the copy incomplete.
   */
  async get(webhookId: string): Promise<IngestWebhook | null> {
    if (this.redis.status !== 'ready') throw new Error('webhook copy unavailable: Redis is not connected');
    const [complete, entry] = await withTimeout(this.redis.hmget(this.key, COMPLETE, webhookId), GET_TIMEOUT_MS, 'webhook copy read');
    if (!complete) throw new Error('webhook copy unavailable: not republished since Redis started empty');
    const m = entry ? /^\d+ \d+ (.*)$/s.exec(entry) : null;
    if (!m || m[1] === DELETED) return null;
    const [name, domain_id, workspace_id, project_id, state, digest, plugin_info] = JSON.parse(m[1]) as [string, string, string, string, string, string, StoredPluginInfo];
    return { webhook_id: webhookId, name, domain_id, workspace_id, project_id, state, plugin_info, key_digest: Buffer.from(digest, 'hex') };
  }

  /**
   * Writes every webhook of PostgreSQL to the copy, removes the entries of webhooks that no longer
   * exist, then marks the copy complete. Answers the number of webhooks.
   */
  async republish(): Promise<number> {
    const [sec, usec] = (await this.redis.time()).map(String);
    const startedAt = `${sec}${usec.padStart(6, '0')}`;
    const { rows } = await this.pool.query<WebhookSource>(
      `SELECT webhook_id, name, domain_id, workspace_id, project_id, state, access_key, plugin_info, revision FROM webhook`,
    );
    for (let i = 0; i < rows.length; i += CHUNK) {
      await this.redis.eval(PUT, 1, this.key, ...rows.slice(i, i + CHUNK).flatMap((w) => [w.webhook_id, rev(w.revision), body(w)]));
    }
    const exists = new Set(rows.map((w) => w.webhook_id));
    const absent = (await this.redis.hkeys(this.key)).filter((f) => f !== COMPLETE && !exists.has(f));
    for (let i = 0; i < absent.length; i += CHUNK) await this.redis.eval(SWEEP, 1, this.key, startedAt, ...absent.slice(i, i + CHUNK));
    await this.redis.hset(this.key, COMPLETE, startedAt);
    this.notify('*');
    await this.redis.publish(this.channel, '*');
    return rows.length;
  }

  /**
   * A republish now, and again 1 s (doubling to 30 s) later until one succeeds: PostgreSQL or Redis
   * may be down when it is asked for (at start, or a write of the copy failed).
   */
  republishSoon(): void {
    if (this.stopped) return;
    this.republisher.run();
  }

  /**
   * Subscribes to the channel (a duplicate connection; ioredis resubscribes after a reconnection,
   * and each time every in-process entry is dropped: changes published meanwhile were missed), and
   * republishes now and whenever the Redis connection is ready again. Does not wait for Redis.
   */
  start(): void {
    if (this.subscriber) return;
    this.stopped = false;
    const sub = (this.subscriber = this.redis.duplicate());
    sub.on('error', (err: Error) => this.o.logger.warn({ err: err.message }, 'webhook copy subscriber error'));
    sub.on('message', (ch: string, id: string) => {
      if (ch === this.channel) this.notify(id);
    });
    sub.on('ready', () => {
      sub.subscribe(this.channel).then(
        () => this.notify('*'),
        (err: Error) => this.o.logger.warn({ err: err.message }, 'webhook copy subscribe failed'),
      );
    });
    this.redis.on('ready', this.onReady);
    if (this.redis.status === 'ready') this.republishSoon();
  }

  stop(): void {
    this.stopped = true;
    this.republisher.stop();
    this.redis.off('ready', this.onReady);
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
