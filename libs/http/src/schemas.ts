import { z } from 'zod';

/** Building blocks for request schemas, shared by every module. */
export const id = z.string().trim().min(1).max(255);
export const name = z.string().trim().min(1).max(255);

/**
 * Characters that hide or reorder what a reader sees: C0 and C1 controls (tab and newline included),
 * DEL, the line and paragraph separators, and the bidirectional marks, embeddings, overrides and
 * isolates (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069): "Trojan Source" names (issue #27).
 */
const UNSAFE_TEXT_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069';
export const UNSAFE_TEXT = new RegExp(`[${UNSAFE_TEXT_CLASS}]`, 'u');
const PLAIN = new RegExp(`^[^${UNSAFE_TEXT_CLASS}]*$`, 'u');
const PLAIN_MESSAGE = 'no control or bidirectional-override characters';

/** A display name people read (1 to 255 characters, trimmed) without control or bidi-override characters. */
export const plainName = name.regex(PLAIN, PLAIN_MESSAGE);
/** Free text people read, possibly empty (at most `max` characters), without control or bidi-override characters. */
export const plainText = (max = 255) => z.string().max(max).regex(PLAIN, PLAIN_MESSAGE);

/** A Struct: a free-form JSON object. */
export const struct = z.record(z.string(), z.unknown());

/**
 * The bounds of `tags`, in every module (issue #27; docs/decisions/api.md): at most 200 tags, keys of
 * at most 255 characters, each value at most 1 KiB and all of them at most 32 KiB, as UTF-8 JSON.
 */
export const TAG_LIMITS = { count: 200, keyLength: 255, valueBytes: 1024, totalBytes: 32_768 } as const;
const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** `tags`: a flat object of string keys, bounded by TAG_LIMITS. */
export const tags = z.record(z.string().max(TAG_LIMITS.keyLength), z.unknown()).superRefine((t, ctx) => {
  const keys = Object.keys(t);
  if (keys.length > TAG_LIMITS.count) return void ctx.addIssue({ code: 'custom', message: `at most ${TAG_LIMITS.count} tags` });
  const big = keys.find((k) => jsonBytes(t[k]) > TAG_LIMITS.valueBytes);
  if (big !== undefined) return void ctx.addIssue({ code: 'custom', path: [big], message: `a tag value is at most ${TAG_LIMITS.valueBytes} bytes (as JSON)` });
  if (jsonBytes(t) > TAG_LIMITS.totalBytes) ctx.addIssue({ code: 'custom', message: `tags are at most ${TAG_LIMITS.totalBytes} bytes in all (as JSON)` });
});
export const stringList = z.array(z.string().min(1).max(255)).max(1000);

/**
 * A request object: unknown fields are refused (naming the field). `domain_id` is accepted on every
 * request (upstream's samples carry it; `{ domainId: 'required' }` where the spec marks it R), but the
 * caller's token decides the domain: the router refuses a body `domain_id` naming another domain.
 */
const withOptionalDomain = <T extends z.ZodRawShape>(shape: T) => z.strictObject({ domain_id: z.string().max(255).optional(), ...shape });
const withRequiredDomain = <T extends z.ZodRawShape>(shape: T) => z.strictObject({ domain_id: id, ...shape });
export function request<T extends z.ZodRawShape>(shape: T, o: { domainId: 'required' }): ReturnType<typeof withRequiredDomain<T>>;
export function request<T extends z.ZodRawShape>(shape: T, o?: { domainId?: 'optional' }): ReturnType<typeof withOptionalDomain<T>>;
export function request<T extends z.ZodRawShape>(shape: T, o: { domainId?: 'optional' | 'required' } = {}) {
  return o.domainId === 'required' ? withRequiredDomain(shape) : withOptionalDomain(shape);
}
