import { z } from 'zod';
import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';
import { id, request } from '@platform/http';
import { applyOnly } from '@platform/query';

/**
 * A repository request: the spec marks `domain_id` R, so it is required; the token still decides the
 * domain (see `callerIn`).
 */
export function domainRequest<T extends z.ZodRawShape>(shape: T) {
  return request({ ...shape, domain_id: id });
}

/** The caller, after checking that a body `domain_id` names the token's domain: another one is refused. */
export function callerIn(auth: AuthContext, domainId: string | undefined): AuthContext {
  if (domainId !== undefined && domainId !== auth.domainId) {
    throw errors.permissionDenied(`Permission denied. (key = domain_id, reason = ${domainId} is not the domain of the access token)`);
  }
  return auth;
}

export const onlySchema = z.array(z.string().trim().min(1).max(255)).max(100);

/** `only` of a get, as upstream: the answer keeps just those fields (dotted paths reach inside structs). */
export function projectOnly<T extends object>(info: T, only: string[] | undefined): Partial<T> {
  only?.forEach((key, i) => {
    if (!(key.split('.')[0] in info)) throw errors.invalidParameter(`only[${i}]`, `${key} is not a field`);
  });
  return applyOnly(info, only);
}
