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
  worker: { concurrency: number; lockDurationMs: number; stalledIntervalMs: number; attempts: number };
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
      concurrency: envInt('WORKER_CONCURRENCY', 2),
      lockDurationMs: envInt('WORKER_LOCK_DURATION_MS', 30_000),
      stalledIntervalMs: envInt('WORKER_STALLED_INTERVAL_MS', 15_000),
      attempts: envInt('WORKER_ATTEMPTS', 5),
    },
  };
}
