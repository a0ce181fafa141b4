import { z } from 'zod';
import type { RoleType } from '@platform/auth';
import { PLUGIN_ERROR_CODES } from '@platform/errors';
import { operation, request } from '@platform/http';
import type { ExternalAuthService } from './service';
import { ExternalAuthInfo } from './responses';

// upstream: set/unset need identity:ExternalAuth.write, get identity:ExternalAuth.read; DOMAIN_ADMIN only.
const write = { permission: 'identity:ExternalAuth.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'identity:ExternalAuth.read', roles: ['DOMAIN_ADMIN'] as RoleType[] };

/** At most this much JSON in `options` or in `secret_data`. */
const MAX_STRUCT_BYTES = 64 * 1024;
const boundedStruct = z.record(z.string().max(255), z.unknown()).refine((v) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8') <= MAX_STRUCT_BYTES, `at most ${MAX_STRUCT_BYTES} bytes as JSON`);

const pluginInfo = z
  .strictObject({
    plugin_id: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .describe('The external auth plugin: one published for the domain (plugin module), or `plugin-oidc-identity-auth`, built in, while nothing is published under that id.'),
    version: z.string().trim().max(64).optional().describe('The plugin version: with MANUAL exactly this one; with AUTO (default) the newest published is used and answered.'),
    upgrade_mode: z.enum(['AUTO', 'MANUAL', 'NONE']).optional().describe('upstream\'s upgrade mode: AUTO (default; NONE is AUTO) follows the newest published version, MANUAL keeps `version`.'),
    options: boundedStruct.describe(
      'The plugin\'s options, a free Struct sent to its init and authorize (at most 64 KiB). The built-in OIDC takes exactly {issuer, client_id, user_id_claim (default email)}; `auto_user_sync: true` creates a user on first login (upstream).',
    ),
    secret_data: boundedStruct
      .optional()
      .describe('The plugin\'s secrets, a free Struct (the built-in OIDC: {client_secret}); sealed at rest, sent only to the plugin\'s authorize, never answered.'),
    schema_id: z.string().max(255).optional().describe('upstream\'s schema of secret_data, kept and sent to the plugin\'s authorize.'),
  })
  .describe('The plugin to authenticate the domain\'s users with, and its options.');

export function externalAuthOperations(service: ExternalAuthService) {
  return [
    operation({
      path: '/identity/v2/external-auth/set',
      access: write,
      summary: 'Set (replace) the domain\'s external authentication: a published ExternalAuth plugin (asked for its metadata), or the built-in OpenID Connect',
      schema: request({ plugin_info: pluginInfo }),
      response: ExternalAuthInfo,
      errors: { ...PLUGIN_ERROR_CODES, 400: ['ERROR_OUTBOUND_REFUSED', ...PLUGIN_ERROR_CODES[400]], 404: ['ERROR_NOT_FOUND'], 503: ['ERROR_SERVICE_UNAVAILABLE', ...PLUGIN_ERROR_CODES[503]] },
      handler: (input, { auth }) => service.set(auth, input),
    }),
    operation({
      path: '/identity/v2/external-auth/unset',
      access: write,
      summary: 'Remove the domain\'s external authentication (its users can no longer log in with auth_type EXTERNAL)',
      schema: request({}),
      response: ExternalAuthInfo,
      errors: { 404: ['ERROR_NOT_FOUND'] },
      handler: (_input, { auth }) => service.unset(auth),
    }),
    operation({
      path: '/identity/v2/external-auth/get',
      access: read,
      summary: 'The domain\'s external authentication (state DISABLED when none is set)',
      schema: request({}),
      response: ExternalAuthInfo,
      handler: (_input, { auth }) => service.get(auth),
    }),
  ];
}
