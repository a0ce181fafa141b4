import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt } from '@platform/core';
import { outboundPolicyFromEnv, type OutboundPolicy } from '@platform/net';

export interface MonitoringConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  /** Base of every webhook_url (the gateway's public URL). */
  publicBaseUrl: string;
  migrateOnStart: boolean;
  /** The private hosts and networks outbound calls (data-source checks, SNS confirmations) may reach (OUTBOUND_ALLOW_PRIVATE). */
  outbound: OutboundPolicy;
  /** Hosts, besides AWS's `sns.<region>.amazonaws.com`, an SNS SubscribeURL may point at (`host` or `host:port`). */
  snsConfirmHosts: string[];
  ingest: {
    /** BullMQ queue name of webhook deliveries. */
    queue: string;
    /** BullMQ key prefix (default `bull`); tests isolate themselves with it. */
    queuePrefix?: string;
    /** Milliseconds the accepting request waits for Redis before answering 503. */
    enqueueTimeoutMs: number;
    /** Deliveries accepted together go to Redis as one job: at most this many, and about this many bytes. */
    batchMax: number;
    batchBytes: number;
    /** How long a webhook read by the accepting path is reused without a database read. */
    webhookCacheMs: number;
    /** A webhook lookup PostgreSQL has not answered within this many ms is read from the Redis copy. */
    webhookLookupTimeoutMs: number;
    /** Events of one event_key within this many seconds join the same alert (upstream's SAME_EVENT_TIME). */
    sameEventSeconds: number;
  };
  worker: {
    concurrency: number;
    batchSize: number;
    /** Store transactions a worker runs at once (each up to batchSize deliveries). */
    storeTransactions: number;
    lockDurationMs: number;
    stalledIntervalMs: number;
  };
}

export function loadConfig(): MonitoringConfig {
  return {
    port: envInt('PORT', 8105),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('monitoring')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    publicBaseUrl: env('PUBLIC_BASE_URL', 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    outbound: outboundPolicyFromEnv(),
    snsConfirmHosts: env('SNS_CONFIRM_ALLOWED_HOSTS', '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    ingest: {
      queue: env('WEBHOOK_QUEUE', 'monitoring-webhook-events'),
      queuePrefix: process.env.QUEUE_PREFIX || undefined,
      enqueueTimeoutMs: envInt('WEBHOOK_ENQUEUE_TIMEOUT_MS', 2000),
      batchMax: envInt('WEBHOOK_BATCH_MAX', 100),
      batchBytes: envInt('WEBHOOK_BATCH_BYTES', 1024 * 1024),
      webhookCacheMs: envInt('WEBHOOK_CACHE_MS', 2000),
      webhookLookupTimeoutMs: envInt('WEBHOOK_LOOKUP_TIMEOUT_MS', 1000),
      sameEventSeconds: envInt('SAME_EVENT_TIME', 600),
    },
    worker: {
      concurrency: envInt('WORKER_CONCURRENCY', 32),
      batchSize: envInt('WORKER_BATCH_SIZE', 200),
      storeTransactions: envInt('WORKER_STORE_TRANSACTIONS', 2),
      lockDurationMs: envInt('WORKER_LOCK_DURATION_MS', 30_000),
      stalledIntervalMs: envInt('WORKER_STALLED_INTERVAL_MS', 15_000),
    },
  };
}
