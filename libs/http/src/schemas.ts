import { z } from 'zod';

/** Building blocks for request schemas, shared by every module. */
export const id = z.string().trim().min(1).max(255);
export const name = z.string().trim().min(1).max(255);
/** A Struct: a free-form JSON object. */
export const struct = z.record(z.string(), z.unknown());
/** `tags`: a flat object of string keys. */
export const tags = z.record(z.string().max(255), z.unknown()).refine((t) => Object.keys(t).length <= 200, 'at most 200 tags');
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
