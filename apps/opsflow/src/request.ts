import type { AuthContext } from '@platform/auth';
import { errors } from '@platform/errors';

/** The caller, after checking that a body `domain_id` names the token's domain: another one is refused. */
export function callerIn(auth: AuthContext, domainId: string | undefined): AuthContext {
  if (domainId !== undefined && domainId !== auth.domainId) {
    throw errors.permissionDenied(`Permission denied. (key = domain_id, reason = ${domainId} is not the domain of the access token)`);
  }
  return auth;
}
