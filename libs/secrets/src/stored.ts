import { ApiError } from '@platform/errors';
import type { SealedSecret, SecretBox } from './secret-box';

/**
 * How sealed values are stored in an ordinary column, and how to tell them from values written before
 * sealing (plain). Reads accept both, so an app keeps working while its backfill (`sealColumn`) has
 * not run yet; every write seals.
 *
 * - JSON column: `{"sealed": "v1", "key_id", "iv", "ciphertext", "auth_tag"}`.
 * - text column: `sealed:v1:<key_id>:<iv>:<ciphertext>:<auth_tag>` (hex and base64: no `:` inside).
 */
export const SEALED_VERSION = 'v1';
export const SEALED_TEXT_PREFIX = `sealed:${SEALED_VERSION}:`;

export type SealedJson = SealedSecret & { sealed: typeof SEALED_VERSION };

/**
 * The AAD of a secret: what it is (`module:table.column`) and the key of the record that holds it, so
 * a sealed value opens only in its own column of its own record.
 */
export function secretAad(purpose: string, ...recordKey: string[]): string {
  return JSON.stringify([purpose, ...recordKey]);
}

const unreadable = () => new ApiError(500, 'ERROR_SECRET_UNREADABLE', 'A stored secret is not in the sealed format.');

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON value in the sealed form (what `sealedJsonSql` tests in SQL). */
export function isSealedJson(v: unknown): v is SealedJson {
  return isObject(v) && v.sealed === SEALED_VERSION;
}

export function sealJson(box: SecretBox, value: unknown, aad: string): SealedJson {
  return { sealed: SEALED_VERSION, ...box.sealText(JSON.stringify(value), aad) };
}

/** The value: opened when sealed; a plain value (stored before sealing) as it is. */
export function openJson(box: SecretBox, stored: unknown, aad: string): unknown {
  if (!isSealedJson(stored)) return stored;
  const { key_id, iv, ciphertext, auth_tag } = stored;
  if (![key_id, iv, ciphertext, auth_tag].every((s) => typeof s === 'string')) throw unreadable();
  return JSON.parse(box.openText({ key_id, iv, ciphertext, auth_tag }, aad));
}

/** A string in the sealed form (what `sealedTextSql` tests in SQL). */
export function isSealedText(v: unknown): v is string {
  return typeof v === 'string' && v.startsWith(SEALED_TEXT_PREFIX);
}

export function sealText(box: SecretBox, value: string, aad: string): string {
  const s = box.sealText(value, aad);
  return `${SEALED_TEXT_PREFIX}${s.key_id}:${s.iv}:${s.ciphertext}:${s.auth_tag}`;
}

/** The string: opened when sealed; a plain string (stored before sealing) as it is. */
export function openText(box: SecretBox, stored: string, aad: string): string {
  if (!isSealedText(stored)) return stored;
  const parts = stored.slice(SEALED_TEXT_PREFIX.length).split(':');
  if (parts.length !== 4) throw unreadable();
  const [key_id, iv, ciphertext, auth_tag] = parts;
  return box.openText({ key_id, iv, ciphertext, auth_tag }, aad);
}

/** SQL true for a column value in the sealed JSON form, false otherwise (never NULL): exactly `isSealedJson`. */
export function sealedJsonSql(column: string): string {
  return `COALESCE(jsonb_typeof(${column}) = 'object' AND ${column} ->> 'sealed' = '${SEALED_VERSION}', false)`;
}

/** SQL true for a column value in the sealed text form, false otherwise (never NULL): exactly `isSealedText`. */
export function sealedTextSql(column: string): string {
  return `COALESCE(starts_with(${column}, '${SEALED_TEXT_PREFIX}'), false)`;
}
