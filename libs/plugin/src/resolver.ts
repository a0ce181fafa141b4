import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { defaultDatabaseUrl } from '@platform/core';
import { errors } from '@platform/errors';
import { EndpointTurns, pickEndpoint, type EndpointCandidate, type ResolvedEndpoint, type UpgradeMode } from './versions';

/**
 * Endpoint resolution for the modules (docs/decisions/plugins.md "Resolver cache"): (domain,
 * plugin_id, version, upgrade_mode) -> endpoint, read from the plugin module's table and cached in
 * memory per (domain, plugin_id, version, mode). The plugin module announces every publish and
 * deregister on a Redis channel; every resolver drops the entries it names at once. While the
 * subscription is not live (not started yet, Redis lost), nothing is cached: every call reads.
 */
const channel = (prefix: string) => `${prefix}plugin:endpoints`;

/** What a change names: the domain (null: a public supervisor, every domain) and the plugin ids (null: all). */
export interface EndpointChange {
  domainId: string | null;
  pluginIds: string[] | null;
}

/** At most this many plugin ids are named in one message; more and the message names them all. */
const MAX_IDS_PER_MESSAGE = 1000;

/** The plugin module's side: announces a change to every resolver. Rejects when Redis is unreachable. */
export class EndpointChanges {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = '',
  ) {}

  async announce(change: EndpointChange): Promise<void> {
    const ids = change.pluginIds && change.pluginIds.length <= MAX_IDS_PER_MESSAGE ? [...new Set(change.pluginIds)] : null;
    await this.redis.publish(channel(this.prefix), JSON.stringify({ d: change.domainId, p: ids }));
  }
}

/** Where candidates come from: the plugin module's table (tableSource) or anything answering the same. */
export interface EndpointSource {
  candidates(domainId: string, pluginId: string): Promise<EndpointCandidate[]>;
}

interface Queryable {
  query<R>(text: string, values: unknown[]): Promise<{ rows: R[] }>;
}

/** At most this many rows are considered for one (domain, plugin_id): a publish carries at most 200 per supervisor. */
export const MAX_CANDIDATES = 5000;

/** The plugin module's database (platform_plugin), read directly: the ACTIVE versions with an endpoint. */
export function tableSource(db: Queryable): EndpointSource {
  return {
    async candidates(domainId, pluginId) {
      const { rows } = await db.query<EndpointCandidate>(
        `SELECT version, endpoint, endpoints, is_public FROM installed_plugin
          WHERE plugin_id = $2 AND state = 'ACTIVE' AND (endpoint <> '' OR endpoints <> '[]'::jsonb) AND (domain_id = $1 OR is_public)
          ORDER BY is_public, updated_at DESC, supervisor_id LIMIT ${MAX_CANDIDATES}`,
        [domainId, pluginId],
      );
      return rows;
    },
  };
}

interface Logger {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
  error(o: object, msg: string): void;
}

export interface ResolverOptions {
  prefix?: string;
  logger?: Logger;
  /** An entry is read again after this long even without a change (a lost message's bound). Default 5 min. */
  ttlMs?: number;
  /** At most this many entries; the oldest goes first. Default 10 000. */
  maxEntries?: number;
}

interface Entry {
  domainId: string;
  pluginId: string;
  result: ResolvedEndpoint | undefined;
  expires: number;
}

export interface ResolveRequest {
  domainId: string;
  pluginId: string;
  version: string;
  upgradeMode: UpgradeMode;
}

/** The 404 of a request that nothing published serves: its plugin_id, and the version MANUAL asked for. */
export function notPublished(r: ResolveRequest) {
  return errors.notFound('plugin_id', r.upgradeMode === 'MANUAL' ? `${r.pluginId} ${r.version}` : r.pluginId);
}

export class PluginEndpointResolver {
  private readonly entries = new Map<string, Entry>();
  private readonly turns = new EndpointTurns();
  private subscriber?: Redis;
  private live = false;
  /** Bumped by every change and every loss of the subscription: a read that started before is not cached. */
  private generation = 0;

  constructor(
    private readonly redis: Redis,
    private readonly source: EndpointSource,
    private readonly o: ResolverOptions = {},
  ) {}

  /** The subscriber connection's CLIENT name (an operator finds it in CLIENT LIST; tests cut it). */
  readonly connectionName = `plugin-resolver-${randomBytes(6).toString('hex')}`;

  /** Entries held (for tests and metrics). */
  get size() {
    return this.entries.size;
  }

  /** True while the subscription is live (only then are answers cached). */
  get caching() {
    return this.live;
  }

  /**
   * Subscribes on a connection of its own (a duplicate of `redis` with its own error listener); ioredis
   * reconnects by itself, and the cache is dropped whenever the connection is lost and again once the
   * subscription is back. Resolves when first subscribed.
   */
  async start(): Promise<void> {
    if (this.subscriber) return;
    const sub = (this.subscriber = this.redis.duplicate({ autoResubscribe: false, connectionName: this.connectionName }));
    sub.on('error', (err: Error) => this.o.logger?.error({ err: err.message }, 'plugin endpoint subscriber error'));
    sub.on('close', () => this.lose());
    sub.on('message', (ch: string, message: string) => {
      if (ch === channel(this.o.prefix ?? '')) this.onMessage(message);
    });
    const subscribe = async () => {
      try {
        await sub.subscribe(channel(this.o.prefix ?? ''));
        this.drop(); // whatever was published while we were away
        this.live = true;
      } catch (err) {
        this.o.logger?.warn({ err: (err as Error).message }, 'plugin endpoint subscription failed; retried on reconnection');
      }
    };
    sub.on('ready', () => void subscribe());
    if (sub.status === 'wait') sub.connect().catch(() => {});
    await new Promise<void>((resolve) => {
      const check = () => (this.live || !this.subscriber ? resolve() : setTimeout(check, 10));
      check();
    });
  }

  stop() {
    const sub = this.subscriber;
    this.subscriber = undefined;
    this.lose();
    sub?.disconnect();
  }

  async resolve(r: ResolveRequest): Promise<ResolvedEndpoint> {
    const found = await this.find(r);
    if (!found) throw notPublished(r);
    return found;
  }

  /**
   * What `resolve` answers, or undefined when nothing published serves the request (no error made: the
   * built-in's every delivery asks, and an error with its stack each time cost about 8% of the worker).
   */
  async find(r: ResolveRequest): Promise<ResolvedEndpoint | undefined> {
    const key = `${r.domainId}\0${r.pluginId}\0${r.version}\0${r.upgradeMode}`;
    const hit = this.entries.get(key);
    let result: ResolvedEndpoint | undefined;
    if (hit && hit.expires > Date.now()) result = hit.result;
    else {
      const gen = this.generation;
      result = pickEndpoint(await this.source.candidates(r.domainId, r.pluginId), r.version, r.upgradeMode);
      if (this.live && gen === this.generation) this.remember(key, { domainId: r.domainId, pluginId: r.pluginId, result, expires: Date.now() + (this.o.ttlMs ?? 300_000) });
    }
    if (!result) return undefined;
    // A version with several replicas: each resolution takes the next, as upstream's plugin service does.
    return result.endpoints.length > 1 ? { ...result, endpoint: this.turns.take(key, result.endpoints) } : result;
  }

  private remember(key: string, e: Entry) {
    this.entries.delete(key);
    if (this.entries.size >= (this.o.maxEntries ?? 10_000)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, e);
  }

  private lose() {
    if (this.live) this.o.logger?.warn({}, 'plugin endpoint subscription lost: the cache is off until it is back');
    this.live = false;
    this.drop();
  }

  private drop(match?: (e: Entry) => boolean) {
    this.generation++;
    if (!match) return this.entries.clear();
    for (const [k, e] of this.entries) if (match(e)) this.entries.delete(k);
  }

  private onMessage(message: string) {
    let change: { d?: unknown; p?: unknown };
    try {
      change = JSON.parse(message) as typeof change;
    } catch {
      return this.drop(); // not understood: drop everything rather than keep something stale
    }
    const domain = typeof change.d === 'string' ? change.d : null;
    const ids = Array.isArray(change.p) ? new Set(change.p.filter((x): x is string => typeof x === 'string')) : null;
    this.drop((e) => (domain === null || e.domainId === domain) && (ids === null || ids.has(e.pluginId)));
  }
}

/**
 * Where a module reads the plugin module's table: PLUGIN_DATABASE_URL (in production a role that may
 * only SELECT installed_plugin), else platform_plugin on the server of `sameServerAs` (the module's
 * own DATABASE_URL: one server holds every module's database unless told otherwise), else on the
 * default server.
 */
export function pluginDatabaseUrl(env: NodeJS.ProcessEnv = process.env, sameServerAs?: string): string {
  if (env.PLUGIN_DATABASE_URL) return env.PLUGIN_DATABASE_URL;
  if (sameServerAs) {
    try {
      const u = new URL(sameServerAs);
      u.pathname = '/platform_plugin';
      return u.toString();
    } catch {
      // not a URL: the default server
    }
  }
  return defaultDatabaseUrl('plugin');
}

/**
 * The resolver a module's main makes: started at once without waiting (Redis may be down at start:
 * until it is subscribed, every call reads the table), failures logged.
 */
export function watchPluginEndpoints(redis: Redis, source: EndpointSource, logger: Logger, prefix = ''): PluginEndpointResolver {
  const resolver = new PluginEndpointResolver(redis, source, { prefix, logger });
  resolver.start().catch((err: Error) => logger.error({ err: err.message }, 'plugin endpoint resolver did not start'));
  return resolver;
}
