import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { structOut, timestamp } from '@platform/http';
import type { ExternalAuthRow } from './repository';

/** A stored JSON value as an object ({} for anything else). */
export const asObject = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** upstream's PluginInfo of an external auth (secret_data is never answered). */
export const ExternalAuthPluginInfo = z
  .strictObject({
    plugin_id: z.string().describe('The external auth plugin: a published one, or `plugin-oidc-identity-auth` (built in).'),
    version: z.string().describe('The version in use when the auth was set: the published version the plugin module answered (the newest with AUTO); the one asked for with the built-in.'),
    upgrade_mode: z.enum(['AUTO', 'MANUAL', 'NONE']).describe('upstream\'s plugin upgrade mode: AUTO follows the newest published version at every login, MANUAL keeps `version`.'),
    options: structOut.describe('The plugin options as set (the built-in OIDC: issuer, client_id, user_id_claim).'),
    metadata: structOut.describe(
      'What the plugin\'s init answered when the auth was set (the built-in OIDC: the provider\'s issuer, authorization/token/userinfo/end-session endpoints, jwks_uri, client_id).',
    ),
    secret_id: z.string().describe('Always `\'\'`: secret_data is kept sealed in identity, not in a secret service.'),
    schema_id: z.string().describe('upstream\'s schema of secret_data as set (`\'\'` when none was given).'),
  })
  .meta({ id: 'ExternalAuthPluginInfo', description: 'The external auth plugin of a domain and its options; secret_data is never answered.' });

/** ExternalAuthInfo (upstream's): when none is set, `state` is DISABLED and `plugin_info` absent. */
export const ExternalAuthInfo = z
  .strictObject({
    domain_id: z.string().describe('The domain (the caller\'s) whose external auth this is.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('ENABLED when users of the domain may log in with auth_type EXTERNAL; DISABLED when none is set.'),
    plugin_info: ExternalAuthPluginInfo.optional().describe('The plugin and its options; absent when no external auth is set.'),
    updated_at: timestamp.describe('When the external auth was last set (ISO 8601); `\'\'` when none is set.'),
  })
  .meta({ id: 'ExternalAuthInfo', description: 'A domain\'s external authentication (single sign-on through an ExternalAuth plugin or the built-in OpenID Connect).' });

/** A stored configuration as ExternalAuthInfo (the secret never answered: secret_id empty). */
export function toExternalAuthInfo(r: ExternalAuthRow) {
  return {
    domain_id: r.domain_id,
    state: r.state as 'ENABLED' | 'DISABLED',
    plugin_info: {
      plugin_id: r.plugin_id,
      version: r.version,
      upgrade_mode: r.upgrade_mode as 'AUTO' | 'MANUAL' | 'NONE',
      options: asObject(r.options),
      metadata: asObject(r.metadata),
      secret_id: '',
      schema_id: r.schema_id,
    },
    updated_at: isoOrEmpty(r.updated_at),
  };
}
