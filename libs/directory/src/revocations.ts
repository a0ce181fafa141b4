import type Redis from 'ioredis';
import { publicKeyFromEnv, TokenVerifier, type RevocationCheck } from '@platform/auth';
import { retryWithBackoff } from '@platform/core';

/**
 * Access tokens that stop counting before they expire. Identity records, in one Redis hash, "every
 * access token of this user (or of this workspace) issued at or before T is revoked" when it disables
 * or deletes a user, changes a user's role bindings, or disables or deletes a workspace; then it
 * publishes the entry on a channel. Every module keeps the entries in memory (`AccessRevocations`):
 * it subscribes, and reads the whole hash whenever its subscription (re)starts, so an entry published
 * while it was disconnected is not missed. The check on a request is two map look-ups, no round trip.
 *
 * Hash `<prefix>auth:revoked`, field `u <json [domain, user]>`, `w <json [domain, workspace]>` or
 * `b <json [domain, user, workspace]>` (the user's tokens in that workspace only: a role binding's
 * change) or `r <json [domain, role]>` (every token granted with that custom role: it was disabled or
 * its permissions changed), value the time in ms; channel `<prefix>auth:revoked` carries `json [field, ms]`. An entry
 * older than the longest access token lifetime can refuse nothing and is pruned by the next revocation.
 *
 * The time T is the caller's (identity takes it from PostgreSQL's clock, under the lock that its token
 * grants take: docs/decisions/identity.md, "Revocations no grant can outrun"); a token counts as
 * revoked when its issue time in ms is at or before T.
 */
const hashKey = (prefix: string) => `${prefix}auth:revoked`;
const channel = hashKey;
export const userField = (domainId: string, userId: string) => `u ${JSON.stringify([domainId, userId])}`;
export const workspaceField = (domainId: string, workspaceId: string) => `w ${JSON.stringify([domainId, workspaceId])}`;
export const bindingField = (domainId: string, userId: string, workspaceId: string) => `b ${JSON.stringify([domainId, userId, workspaceId])}`;
/** Every token granted with a (custom) role: the role was disabled or its permissions changed. */
export const roleField = (domainId: string, roleId: string) => `r ${JSON.stringify([domainId, roleId])}`;

const ID_COUNT: Record<string, number> = { u: 2, w: 2, b: 3, r: 2 };

/** A hash field (`u ["d","x"]`) as the in-memory key (`u\0d\0x`); undefined for anything else. */
function memoryKey(field: string): string | undefined {
  const kind = field[0];
  if (!Object.hasOwn(ID_COUNT, kind) || field[1] !== ' ') return undefined;
  try {
    const ids = JSON.parse(field.slice(2)) as unknown;
    if (!Array.isArray(ids) || ids.length !== ID_COUNT[kind] || !ids.every((x) => typeof x === 'string')) return undefined;
    return [kind, ...ids].join('\0');
  } catch {
    return undefined;
  }
}

/** The longest an access token can live (identity caps `timeout` at 604 800 s); entries older than this are moot. */
export const DEFAULT_REVOCATION_TTL_MS = 604_800_000;

/** At most this many entries are kept in memory (oldest-first eviction never drops a live one in practice: see decisions). */
const MAX_ENTRIES = 1_000_000;

export class RevocationPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = '',
    private readonly ttlMs = DEFAULT_REVOCATION_TTL_MS,
  ) {}

  /** Every access token of `userId` issued up to `atMs` (default: now) stops counting, in every module. */
  revokeUser(domainId: string, userId: string, atMs?: number): Promise<number> {
    return this.revoke(userField(domainId, userId), atMs);
  }

  /** Every access token scoped to `workspaceId` issued up to `atMs` (default: now) stops counting, in every module. */
  revokeWorkspace(domainId: string, workspaceId: string, atMs?: number): Promise<number> {
    return this.revoke(workspaceField(domainId, workspaceId), atMs);
  }

  /** Every access token of `userId` scoped to `workspaceId` issued up to `atMs` (default: now) stops counting. */
  revokeUserInWorkspace(domainId: string, userId: string, workspaceId: string, atMs?: number): Promise<number> {
    return this.revoke(bindingField(domainId, userId, workspaceId), atMs);
  }

  /** Every access token granted with role `roleId` up to `atMs` (default: now) stops counting, whoever holds it. */
  revokeRole(domainId: string, roleId: string, atMs?: number): Promise<number> {
    return this.revoke(roleField(domainId, roleId), atMs);
  }

  private async revoke(field: string, atMs?: number): Promise<number> {
    const at = atMs ?? Date.now();
    await this.redis.multi().hset(hashKey(this.prefix), field, String(at)).publish(channel(this.prefix), JSON.stringify([field, at])).exec().then(failed);
    await this.prune(at);
    return at;
  }

  private async prune(now: number) {
    const all = await this.redis.hgetall(hashKey(this.prefix));
    const stale = Object.entries(all)
      .filter(([, v]) => !(Number(v) > now - this.ttlMs))
      .map(([k]) => k);
    if (stale.length) await this.redis.hdel(hashKey(this.prefix), ...stale);
  }
}

/** A MULTI's replies carry the commands' errors instead of rejecting: surface the first. */
function failed(replies: [Error | null, unknown][] | null) {
  const err = replies?.find(([e]) => e)?.[0];
  if (err) throw err;
  if (!replies) throw new Error('Redis transaction aborted');
}

interface Logger {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
  error(o: object, msg: string): void;
}

/**
 * The revocations every module checks, in memory, kept current from Redis (see above). `start()`
 * opens a subscriber connection (a duplicate of `redis`, with its own error listener; ioredis
 * reconnects and resubscribes by itself) and loads the hash each time the subscription is ready.
 */
export class AccessRevocations implements RevocationCheck {
  private readonly entries = new Map<string, number>();
  private subscriber?: Redis;
  private loader?: ReturnType<typeof retryWithBackoff<number>>;

  constructor(
    private readonly redis: Redis,
    private readonly o: { prefix?: string; logger?: Logger; ttlMs?: number } = {},
  ) {}

  private get prefix() {
    return this.o.prefix ?? '';
  }

  /**
   * Records an entry (max of what is known): from the channel, the hash, or identity's own write. Kept
   * under `<u|w>\0<domain>\0<id>`, a key a request builds by concatenation (no JSON on the hot path).
   */
  note(field: string, atMs: number) {
    if (!Number.isFinite(atMs)) return;
    const key = memoryKey(field);
    if (key === undefined) return;
    const before = this.entries.get(key);
    if (before !== undefined && before >= atMs) return;
    if (before === undefined && this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, atMs);
  }

  /** Reads the whole hash (at start, and after every reconnection). */
  async load(): Promise<number> {
    const all = await this.redis.hgetall(hashKey(this.prefix));
    const oldest = Date.now() - (this.o.ttlMs ?? DEFAULT_REVOCATION_TTL_MS);
    for (const [field, v] of Object.entries(all)) if (Number(v) > oldest) this.note(field, Number(v));
    return this.entries.size;
  }

  /**
   * Subscribes and loads; resolves once both are done the first time. An app's main does not wait for
   * it (Redis may be down at start: the subscription then starts when it comes back).
   */
  async start(): Promise<void> {
    if (this.subscriber) return;
    const sub = (this.subscriber = this.redis.duplicate());
    sub.on('error', (err: Error) => this.o.logger?.error({ err: err.message }, 'revocation subscriber error'));
    sub.on('message', (ch: string, message: string) => {
      if (ch !== channel(this.prefix)) return;
      try {
        const [field, at] = JSON.parse(message) as [unknown, unknown];
        if (typeof field === 'string' && typeof at === 'number') this.note(field, at);
      } catch {
        /* not ours: ignored */
      }
    });
    // Subscribed first, then the hash: an entry published in between is in one or the other. Again
    // after every reconnection (ioredis emits 'ready' each time), for what was published meanwhile. A
    // load that fails (the main connection not ready yet, say) is tried again, 0.5 s doubling to 30 s.
    let loaded: () => void = () => {};
    const first = new Promise<void>((resolve) => (loaded = resolve));
    this.loader = retryWithBackoff(
      async () => {
        await sub.subscribe(channel(this.prefix));
        return this.load();
      },
      {
        firstMs: 500,
        onSuccess: (n) => {
          this.o.logger?.info({ entries: n }, 'access revocations loaded');
          loaded();
        },
        onFailure: (err, retryMs) => this.o.logger?.warn({ err: err.message, retry_ms: retryMs }, 'access revocations load failed; retrying'),
      },
    );
    sub.on('ready', () => this.loader?.run());
    if (sub.status === 'wait') sub.connect().catch(() => {}); // a lazyConnect original: connect the duplicate
    await first;
  }

  stop() {
    this.loader?.stop();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  revoked(t: { domainId: string; userId: string; workspaceId: string; roleId?: string; issuedAtMs: number }): boolean {
    if (this.entries.size === 0) return false;
    const u = this.entries.get(`u\0${t.domainId}\0${t.userId}`);
    if (u !== undefined && t.issuedAtMs <= u) return true;
    if (t.roleId) {
      const r = this.entries.get(`r\0${t.domainId}\0${t.roleId}`);
      if (r !== undefined && t.issuedAtMs <= r) return true;
    }
    if (!t.workspaceId) return false;
    const w = this.entries.get(`w\0${t.domainId}\0${t.workspaceId}`);
    if (w !== undefined && t.issuedAtMs <= w) return true;
    const b = this.entries.get(`b\0${t.domainId}\0${t.userId}\0${t.workspaceId}`);
    return b !== undefined && t.issuedAtMs <= b;
  }
}

/**
 * The revocations an app's main hands its TokenVerifier: started at once without waiting (Redis may
 * be down at start; the subscription starts when it comes back), failures logged.
 */
export function watchRevocations(redis: Redis, logger: Logger, prefix = ''): AccessRevocations {
  const revocations = new AccessRevocations(redis, { prefix, logger });
  revocations.start().catch((err: Error) => logger.error({ err: err.message }, 'access revocations did not start'));
  return revocations;
}

/** Every app's token verifier: the platform's public key (JWT_PUBLIC_KEY) and identity's revocations. */
export function platformVerifier(redis: Redis, logger: Logger): TokenVerifier {
  return new TokenVerifier(publicKeyFromEnv()).useRevocations(watchRevocations(redis, logger));
}
