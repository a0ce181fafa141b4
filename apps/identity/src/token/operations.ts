import { z } from 'zod';
import { operation, stringList } from '@platform/http';
import { SCOPES } from '@platform/auth';
import type { TokenService } from './service';
import { GrantTokenInfo, TokenInfo } from './responses';

const timeout = z.number().int().positive().max(2_147_483_647);

export function tokenOperations(service: TokenService) {
  return [
    operation({
      path: '/identity/v2/token/issue',
      access: 'public',
      summary: 'Issue an access and a refresh token from credentials',
      schema: z.strictObject({
        credentials: z
          .record(z.string(), z.unknown())
          .describe(
            'LOCAL: {user_id, password}; MFA: {user_id} (with verify_code); EXTERNAL: what the domain\'s auth plugin takes (sent to its authorize, at most 16 KiB), with the built-in OIDC {access_token} or {id_token}, a token of the domain\'s OpenID provider (external-auth/set).',
          ),
        domain_id: z.string().min(1).max(255),
        auth_type: z
          .enum(['LOCAL', 'EXTERNAL', 'MFA'])
          .optional()
          .describe('LOCAL (default): a password; EXTERNAL: through the domain\'s external auth (a published plugin, or the built-in OIDC); MFA: the second step with verify_code.'),
        timeout: timeout.optional(),
        verify_code: z.string().max(32).optional(),
      }),
      response: TokenInfo,
      errors: {
        401: ['ERROR_AUTHENTICATE_FAILURE', 'ERROR_LOGIN_BLOCKED', 'ERROR_MFA_REQUIRED', 'ERROR_INVALID_CREDENTIALS'],
        429: ['ERROR_TOO_MANY_REQUESTS'],
        // EXTERNAL: the domain's OpenID provider cannot be reached (or answers 5xx); its auth plugin cannot
        // be reached, or is no longer published, or the plugin module's table cannot be read.
        503: ['ERROR_SERVICE_UNAVAILABLE', 'ERROR_PLUGIN_UNAVAILABLE'],
      },
      handler: (input, ctx) => service.issue(input, ctx.clientIp),
    }),
    operation({
      path: '/identity/v2/token/grant',
      access: 'public',
      summary: 'Exchange a refresh token for a scoped access token',
      schema: z.strictObject({
        grant_type: z.enum(['REFRESH_TOKEN', 'SYSTEM_TOKEN']),
        token: z.string().min(1).max(8192),
        scope: z.enum(SCOPES),
        timeout: timeout.optional(),
        permissions: stringList.optional(),
        domain_id: z.string().max(255).optional(),
        workspace_id: z.string().max(255).optional(),
      }),
      response: GrantTokenInfo,
      errors: {
        400: ['ERROR_INVALID_GRANT_TYPE', 'ERROR_WORKSPACE_STATE'],
        401: ['ERROR_AUTHENTICATE_FAILURE'],
        403: ['ERROR_PERMISSION_DENIED'],
        404: ['ERROR_NOT_FOUND'],
      },
      handler: (input) => service.grant(input),
    }),
  ];
}
