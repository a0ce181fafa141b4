import { readFileSync } from 'node:fs';
import { env, envInt } from '@platform/core';

/** The kinds of unary call, each with its own deadline. */
export type CallKind = 'init' | 'verify' | 'getTasks' | 'getLinkedAccounts' | 'parse' | 'authorize' | 'metric' | 'health';

export interface StreamBounds {
  /** The whole stream must end within this (ms). */
  timeoutMs: number;
  /** No message for this long while the consumer waits for one ends the stream (ms). */
  idleMs: number;
  /** At most this many messages... */
  maxMessages: number;
  /** ...and this many bytes of messages. */
  maxBytes: number;
}

/** How plugin calls behave (docs/decisions/plugins.md, "Calls"); `pluginClientConfigFromEnv` reads it. */
export interface PluginClientConfig {
  /** Deadline of each unary call kind (ms), from the call's start to its answer, retries included. */
  timeouts: Record<CallKind, number>;
  /** Defaults of a server stream's bounds; a caller may set its own per call. */
  stream: StreamBounds;
  /** Largest message received from a plugin (bytes). */
  maxReceiveBytes: number;
  /** Largest message sent to a plugin (bytes). */
  maxSendBytes: number;
  /** Struct / ListValue nesting accepted either way. */
  maxJsonDepth: number;
  /** UNAVAILABLE is retried: attempts in all (1 = no retry), waits from retryBaseMs doubling to retryMaxMs. */
  retryAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Channels kept open (one per endpoint); the least recently used one is closed past this. */
  maxChannels: number;
  /** A channel unused this long is closed (ms). */
  channelIdleMs: number;
  /** The longest wait between reconnection attempts of a channel to a plugin that went away (ms). */
  reconnectMaxMs: number;
  /** PEM of the certificate authorities a grpcs:// plugin's certificate is checked against (default: Node's). */
  tlsCa?: Buffer;
}

export const DEFAULT_PLUGIN_CLIENT_CONFIG: PluginClientConfig = {
  timeouts: { init: 60_000, verify: 60_000, getTasks: 120_000, getLinkedAccounts: 120_000, parse: 15_000, authorize: 15_000, metric: 60_000, health: 5_000 },
  stream: { timeoutMs: 2 * 3600_000, idleMs: 300_000, maxMessages: 1_000_000, maxBytes: 8 * 1024 ** 3 },
  maxReceiveBytes: 32 * 1024 ** 2,
  maxSendBytes: 8 * 1024 ** 2,
  maxJsonDepth: 64,
  retryAttempts: 3,
  retryBaseMs: 200,
  retryMaxMs: 2_000,
  maxChannels: 64,
  channelIdleMs: 300_000,
  reconnectMaxMs: 5_000,
};

/**
 * The configuration from PLUGIN_* variables, each defaulting to DEFAULT_PLUGIN_CLIENT_CONFIG:
 * PLUGIN_TIMEOUT_<KIND>_MS (INIT, VERIFY, GET_TASKS, GET_LINKED_ACCOUNTS, PARSE, AUTHORIZE, METRIC,
 * HEALTH), PLUGIN_STREAM_TIMEOUT_MS, PLUGIN_STREAM_IDLE_MS, PLUGIN_STREAM_MAX_MESSAGES,
 * PLUGIN_STREAM_MAX_BYTES, PLUGIN_MAX_RECEIVE_BYTES, PLUGIN_MAX_SEND_BYTES, PLUGIN_MAX_JSON_DEPTH,
 * PLUGIN_RETRY_ATTEMPTS, PLUGIN_RETRY_BASE_MS, PLUGIN_RETRY_MAX_MS, PLUGIN_MAX_CHANNELS,
 * PLUGIN_CHANNEL_IDLE_MS, PLUGIN_RECONNECT_MAX_MS, PLUGIN_TLS_CA_FILE (a PEM file).
 */
export function pluginClientConfigFromEnv(): PluginClientConfig {
  const d = DEFAULT_PLUGIN_CLIENT_CONFIG;
  const positive = (name: string, fallback: number) => {
    const v = envInt(name, fallback);
    if (v <= 0) throw new Error(`environment variable ${name} must be a positive integer, got ${v}`);
    return v;
  };
  const timeout = (kind: CallKind) => positive(`PLUGIN_TIMEOUT_${kind.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}_MS`, d.timeouts[kind]);
  const caFile = env('PLUGIN_TLS_CA_FILE', '');
  return {
    timeouts: Object.fromEntries((Object.keys(d.timeouts) as CallKind[]).map((k) => [k, timeout(k)])) as Record<CallKind, number>,
    stream: {
      timeoutMs: positive('PLUGIN_STREAM_TIMEOUT_MS', d.stream.timeoutMs),
      idleMs: positive('PLUGIN_STREAM_IDLE_MS', d.stream.idleMs),
      maxMessages: positive('PLUGIN_STREAM_MAX_MESSAGES', d.stream.maxMessages),
      maxBytes: positive('PLUGIN_STREAM_MAX_BYTES', d.stream.maxBytes),
    },
    maxReceiveBytes: positive('PLUGIN_MAX_RECEIVE_BYTES', d.maxReceiveBytes),
    maxSendBytes: positive('PLUGIN_MAX_SEND_BYTES', d.maxSendBytes),
    maxJsonDepth: positive('PLUGIN_MAX_JSON_DEPTH', d.maxJsonDepth),
    retryAttempts: positive('PLUGIN_RETRY_ATTEMPTS', d.retryAttempts),
    retryBaseMs: positive('PLUGIN_RETRY_BASE_MS', d.retryBaseMs),
    retryMaxMs: positive('PLUGIN_RETRY_MAX_MS', d.retryMaxMs),
    maxChannels: positive('PLUGIN_MAX_CHANNELS', d.maxChannels),
    channelIdleMs: positive('PLUGIN_CHANNEL_IDLE_MS', d.channelIdleMs),
    reconnectMaxMs: positive('PLUGIN_RECONNECT_MAX_MS', d.reconnectMaxMs),
    ...(caFile && { tlsCa: readFileSync(caFile) }),
  };
}
