/**
 * The development key, used only when SECRET_ENCRYPTION_KEY is unset and NODE_ENV is not
 * `production`. It is public (it is in this file): anything sealed with it is not secret.
 */
export const DEV_SECRET_ENCRYPTION_KEY = 'ZGV2LW9ubHktc2VjcmV0LWtleS1kby1ub3QtdXNlISE=';

/** A 32-byte key given as base64 (44 characters) or hex (64 characters). */
export function parseKey(raw: string, name: string): Buffer {
  const value = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  if (key.length !== 32) throw new Error(`${name} must be 32 bytes, as base64 or hex (got ${key.length} bytes)`);
  return key;
}

/**
 * The keys of every app that seals secrets (statistics, cost-analysis, identity), from the same
 * variables: SECRET_ENCRYPTION_KEY seals and opens, SECRET_ENCRYPTION_PREVIOUS_KEYS (comma-separated)
 * only open. Without SECRET_ENCRYPTION_KEY, production refuses to start; anywhere else the public
 * development key is used.
 */
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

/** Secrets are sealed with the public development key (worth a warning at start). */
export function usesDevelopmentKey(e: NodeJS.ProcessEnv = process.env): boolean {
  return !e.SECRET_ENCRYPTION_KEY?.trim();
}

/** At an app's start: a warning when its secrets are sealed with the public development key. */
export function warnIfDevelopmentKey(logger: { warn(msg: string): void }, what: string, e: NodeJS.ProcessEnv = process.env): void {
  if (usesDevelopmentKey(e)) logger.warn(`SECRET_ENCRYPTION_KEY is unset: ${what} are sealed with the public development key`);
}
