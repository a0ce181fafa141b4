import { defaultDatabaseUrl, defaultRedisUrl, env, envBool, envInt } from '@platform/core';
import { loadSecretKeys } from '@platform/secrets';
import { parseRates } from './currency';
import { outboundPolicyFromEnv, type OutboundPolicy } from '@platform/net';

export interface CostAnalysisConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  migrateOnStart: boolean;
  /** Prefix of BullMQ keys (tests isolate themselves with it). */
  queuePrefix: string;
  /** Prefix of the project directory's Redis keys (identity publishes there). */
  directoryPrefix: string;
  exchange: {
    /** Rates of the default domain: units of each currency per 1 unit of `base`. */
    defaults: Record<string, number>;
    base: string;
    /** Name written to unified costs' exchange_source. */
    source: string;
  };
  /** Currencies every unified cost's `cost` is converted into. */
  unifiedCurrencies: string[];
  /** Day of the next month from which a month's unified costs are confirmed (upstream: 15). */
  aggregationDay: number;
  /** A job still IN_PROGRESS after this many seconds is TIMEOUT when the next sync comes. */
  jobTimeoutSeconds: number;
  /** The private hosts and networks data-source fetches may reach (OUTBOUND_ALLOW_PRIVATE). */
  outbound: OutboundPolicy;
  /** AES-256-GCM keys sealing data sources' secret_data: the first seals, every one opens (rotation). */
  secretKeys: Buffer[];
  /** Upstream's DATA_SOURCE_SYNC_HOUR: the hour (UTC) of the schedule a data source gets when registered without one. */
  defaultSyncHour: number;
  worker: {
    concurrency: number;
    lockDurationMs: number;
    stalledIntervalMs: number;
    attempts: number;
    /** Slots of the queue one domain's tasks may hold at once, across every worker process (fair share). */
    domainSlots: number;
  };
  /** What one collection task may take (issue #32): past any bound the task fails at once, saying which. */
  limits: CollectionLimits;
}

export interface CollectionLimits {
  /** CSV: characters of one field (a quoted one included), of one record, and fields of one record. */
  csvMaxFieldChars: number;
  csvMaxRecordChars: number;
  csvMaxColumns: number;
  /** A fetch: its whole body within this time, at this minimum rate over each window of waiting, at most these bytes. */
  fetchTimeoutMs: number;
  fetchMinBytesPerSecond: number;
  fetchRateWindowMs: number;
  maxBytes: number;
  /** Cost rows one task writes. */
  maxRows: number;
  /** A task's whole run (fetch, parse, COPY, closing its job). */
  taskTimeoutMs: number;
  /** Tags of one row, the characters of a tag's key and value, and the distinct tag keys of a data source. */
  maxTagsPerRow: number;
  maxTagKeyChars: number;
  maxTagValueChars: number;
  maxTagKeys: number;
}

function positive(name: string, fallback: number): number {
  const v = envInt(name, fallback);
  if (!(v > 0)) throw new Error(`${name} must be a positive integer`);
  return v;
}

/** The bounds from the environment (defaults documented in docs/decisions/cost-analysis.md). */
export function loadLimits(): CollectionLimits {
  return {
    csvMaxFieldChars: positive('CSV_MAX_FIELD_CHARS', 64 * 1024),
    csvMaxRecordChars: positive('CSV_MAX_RECORD_CHARS', 1024 * 1024),
    csvMaxColumns: positive('CSV_MAX_COLUMNS', 1000),
    fetchTimeoutMs: positive('FETCH_TIMEOUT_SECONDS', 900) * 1000,
    fetchMinBytesPerSecond: positive('FETCH_MIN_BYTES_PER_SECOND', 1024),
    fetchRateWindowMs: positive('FETCH_RATE_WINDOW_SECONDS', 30) * 1000,
    maxBytes: positive('COLLECT_MAX_BYTES', 2 * 1024 ** 3),
    maxRows: positive('COLLECT_MAX_ROWS', 20_000_000),
    taskTimeoutMs: positive('TASK_TIMEOUT_SECONDS', 1800) * 1000,
    maxTagsPerRow: positive('COLLECT_MAX_TAGS_PER_ROW', 50),
    maxTagKeyChars: positive('COLLECT_MAX_TAG_KEY_CHARS', 128),
    maxTagValueChars: positive('COLLECT_MAX_TAG_VALUE_CHARS', 1024),
    maxTagKeys: positive('COLLECT_MAX_TAG_KEYS', 500),
  };
}

const DEFAULT_RATES = '{"USD":1,"KRW":1380,"JPY":150,"EUR":0.92,"GBP":0.79,"CNY":7.2}';

export function loadConfig(): CostAnalysisConfig {
  const base = env('EXCHANGE_BASE_CURRENCY', 'USD');
  const defaults = parseRates(env('DEFAULT_EXCHANGE_RATES', DEFAULT_RATES), 'DEFAULT_EXCHANGE_RATES');
  if (defaults[base] !== 1) throw new Error(`DEFAULT_EXCHANGE_RATES must give the base currency ${base} the rate 1`);
  const unifiedCurrencies = env('UNIFIED_COST_CURRENCIES', 'KRW,USD,JPY')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  for (const c of unifiedCurrencies) {
    if (!(c in defaults)) throw new Error(`UNIFIED_COST_CURRENCIES: ${c} has no rate in DEFAULT_EXCHANGE_RATES`);
  }
  const aggregationDay = envInt('UNIFIED_COST_AGGREGATION_DAY', 15);
  if (aggregationDay < 1 || aggregationDay > 28) throw new Error('UNIFIED_COST_AGGREGATION_DAY must be 1..28');
  const defaultSyncHour = envInt('DATA_SOURCE_SYNC_HOUR', 16);
  if (defaultSyncHour < 0 || defaultSyncHour > 23) throw new Error('DATA_SOURCE_SYNC_HOUR must be 0..23');
  const concurrency = positive('WORKER_CONCURRENCY', 2);
  return {
    port: envInt('PORT', 8102),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('cost-analysis')),
    redisUrl: env('REDIS_URL', defaultRedisUrl()),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    queuePrefix: env('QUEUE_PREFIX', 'bull'),
    directoryPrefix: env('DIRECTORY_PREFIX', ''),
    exchange: { defaults, base, source: env('EXCHANGE_SOURCE', 'MANUAL') },
    unifiedCurrencies,
    aggregationDay,
    jobTimeoutSeconds: envInt('JOB_TIMEOUT_SECONDS', 3600),
    outbound: outboundPolicyFromEnv(),
    secretKeys: loadSecretKeys(),
    defaultSyncHour,
    worker: {
      concurrency,
      lockDurationMs: envInt('WORKER_LOCK_DURATION_MS', 30_000),
      stalledIntervalMs: envInt('WORKER_STALLED_INTERVAL_MS', 15_000),
      attempts: envInt('WORKER_ATTEMPTS', 5),
      domainSlots: positive('WORKER_DOMAIN_SLOTS', Math.max(1, Math.floor(concurrency / 2))),
    },
    limits: loadLimits(),
  };
}
