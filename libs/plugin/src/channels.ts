import { Client, credentials, type ChannelOptions } from '@grpc/grpc-js';
import { pluginErrors } from '@platform/errors';
import type { PluginClientConfig } from './config';
import type { PluginEndpoint } from './endpoint';
import { H2Channel } from './h2';

interface Entry {
  key: string;
  endpoint: PluginEndpoint;
  /** Unary calls: one HTTP/2 session (h2.ts), opened at the first call. */
  h2: H2Channel;
  /** Server streams: a grpc-js channel, made at the first stream. */
  grpc?: Client;
  inFlight: number;
  lastUsed: number;
  /** Closed once its calls end (evicted, or dropped after the plugin stayed unavailable). */
  retiring: boolean;
}

/** Closes an entry's channels (gracefully: calls in flight end first). */
function shut(e: Entry): void {
  e.h2.close();
  e.grpc?.close();
}

/** A channel lent for one call: give it back with `release()` (once). */
export interface ChannelLease {
  /** The endpoint's HTTP/2 channel, for unary calls. */
  h2: H2Channel;
  /** The endpoint's grpc-js channel, for server streams (made on first use). */
  readonly client: Client;
  release(): void;
  /** Closes the channel once its calls end; the next call opens a new one (a fresh connection and address). */
  retire(): void;
}

/**
 * One channel per endpoint (an HTTP/2 session for unary calls, and a grpc-js channel once a server
 * stream is asked for), reused by every call to it, bounded: a channel unused for
 * `channelIdleMs` is closed by a sweep, and past `maxChannels` the least recently used one is closed
 * (after its calls end; the new one is opened at once).
 */
export class ChannelPool {
  private readonly entries = new Map<string, Entry>(); // in order of last use, oldest first
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly config: PluginClientConfig) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1000, Math.floor(config.channelIdleMs / 2)));
    this.sweeper.unref();
  }

  /** Channels open now (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  acquire(endpoint: PluginEndpoint): ChannelLease {
    if (this.closed) throw pluginErrors.unavailable('the plugin clients are closed (the process is stopping)');
    let e = this.entries.get(endpoint.url);
    if (e) this.entries.delete(endpoint.url); // re-inserted below as the most recent
    else {
      e = { key: endpoint.url, endpoint, h2: new H2Channel(endpoint, { tlsCa: this.config.tlsCa }), inFlight: 0, lastUsed: 0, retiring: false };
      this.evictPast(this.config.maxChannels - 1);
    }
    this.entries.set(endpoint.url, e);
    e.inFlight++;
    e.lastUsed = Date.now();
    const entry = e;
    let released = false;
    const grpc = () => (entry.grpc ??= this.open(entry.endpoint));
    return {
      h2: entry.h2,
      get client() {
        return grpc();
      },
      release: () => {
        if (released) return;
        released = true;
        entry.inFlight--;
        entry.lastUsed = Date.now();
        if (entry.retiring && entry.inFlight === 0) shut(entry);
      },
      retire: () => this.retire(entry),
    };
  }

  /** Closes every channel; calls in flight end with CANCELLED/UNAVAILABLE. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const e of this.entries.values()) {
      e.h2.destroy();
      e.grpc?.close();
    }
    this.entries.clear();
  }

  private open(endpoint: PluginEndpoint): Client {
    const options: ChannelOptions = {
      'grpc.max_receive_message_length': this.config.maxReceiveBytes,
      'grpc.max_send_message_length': this.config.maxSendBytes,
      'grpc.max_reconnect_backoff_ms': this.config.reconnectMaxMs,
      'grpc.initial_reconnect_backoff_ms': Math.min(1000, this.config.reconnectMaxMs),
      // Our retry policy (UNAVAILABLE only, bounded) is the only one.
      'grpc.enable_retries': 0,
    };
    const creds = endpoint.tls ? credentials.createSsl(this.config.tlsCa ?? null) : credentials.createInsecure();
    return new Client(endpoint.target, creds, options);
  }

  private retire(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    e.retiring = true;
    if (e.inFlight === 0) shut(e);
  }

  private evictPast(limit: number): void {
    for (const e of this.entries.values()) {
      if (this.entries.size <= limit) break;
      this.retire(e);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const e of [...this.entries.values()]) if (e.inFlight === 0 && now - e.lastUsed >= this.config.channelIdleMs) this.retire(e);
  }
}
