import { defaultDatabaseUrl, env, envBool, envInt, MODULES } from '@platform/core';

export interface StatisticsConfig {
  port: number;
  databaseUrl: string;
  migrateOnStart: boolean;
  /** AES-256-GCM keys for storage secrets: the first encrypts, every one decrypts (rotation). */
  secretKeys: Buffer[];
  /** Plugins may reach private, loopback and link-local addresses (off by default: SSRF). */
  allowPrivateHosts: boolean;
  /** Time limit of a plugin's verify (connect + probe), in milliseconds. */
  verifyTimeoutMs: number;
}

/**
 * The development key, used only when SECRET_ENCRYPTION_KEY is unset and NODE_ENV is not
 * `production`. It is public (it is in this file): anything encrypted with it is not secret.
 */
export const DEV_SECRET_ENCRYPTION_KEY = 'ZGV2LW9ubHktc2VjcmV0LWtleS1kby1ub3QtdXNlISE=';

/** A 32-byte key given as base64 (44 characters) or hex (64 characters). */
export function parseKey(raw: string, name: string): Buffer {
  const value = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes, as base64 or hex (got ${key.length} bytes)`);
  return key;
}

export function loadSecretKeys(e: NodeJS.ProcessEnv = process.env): Buffer[] {
  const current = e.SECRET_ENCRYPTION_KEY?.trim();
  if (!current && e.NODE_ENV === 'production') {
    throw new Error('SECRET_ENCRYPTION_KEY is required when NODE_ENV is production');
  }
  const previous = (e.SECRET_ENCRYPTION_PREVIOUS_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k, i) => parseKey(k, `SECRET_ENCRYPTION_PREVIOUS_KEYS[${i}]`));
  return [parseKey(current || DEV_SECRET_ENCRYPTION_KEY, 'SECRET_ENCRYPTION_KEY'), ...previous];
}

export function loadConfig(): StatisticsConfig {
  return {
    port: envInt('PORT', MODULES.statistics.port),
    databaseUrl: env('DATABASE_URL', defaultDatabaseUrl('statistics')),
    migrateOnStart: envBool('MIGRATE_ON_START', false),
    secretKeys: loadSecretKeys(),
    allowPrivateHosts: envBool('STORAGE_ALLOW_PRIVATE_HOSTS', false),
    verifyTimeoutMs: envInt('STORAGE_VERIFY_TIMEOUT_MS', 5000),
  };
}
