import { z } from 'zod';
import { timestamp } from '@platform/http';

/** The options of the built-in OIDC plugin, as stored and answered. */
export const OidcOptionsInfo = z
  .strictObject({
    issuer: z.string().describe('The OpenID provider\'s issuer URL; tokens must carry it as `iss`.'),
    client_id: z.string().describe('The client registered at the provider for this platform; tokens must name it in `aud` (or `azp`).'),
    user_id_claim: z.string().describe('The token (or userinfo) claim whose value is the platform user_id.'),
  })
  .meta({ id: 'ExternalAuthOidcOptions', description: 'How tokens of the OpenID provider are checked and mapped to platform users.' });

/** upstream's PluginInfo of an external auth (secret_data is never answered). */
export const ExternalAuthPluginInfo = z
  .strictObject({
    plugin_id: z.string().describe('The external auth plugin: `plugin-oidc-identity-auth`, the one built in.'),
    version: z.string().describe('The plugin version the caller asked for (informational: the plugin is built in).'),
    upgrade_mode: z.enum(['AUTO', 'MANUAL', 'NONE']).describe('upstream\'s plugin upgrade mode (informational: the plugin is built in).'),
    options: OidcOptionsInfo.describe('The plugin options as set.'),
    metadata: z
      .record(z.string(), z.unknown())
      .describe('What the provider\'s discovery document said when the auth was set: issuer, authorization/token/userinfo/end-session endpoints, jwks_uri, client_id.'),
    secret_id: z.string().describe('Always `\'\'`: secret_data is kept sealed in identity, not in a secret service.'),
    schema_id: z.string().describe('Always `\'\'`: the plugin\'s options need no schema.'),
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
  .meta({ id: 'ExternalAuthInfo', description: 'A domain\'s external authentication (single sign-on with an OpenID Connect provider).' });
