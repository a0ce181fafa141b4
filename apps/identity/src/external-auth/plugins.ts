import { choosePlugin, resolveRequestOf, type PluginChoice, type PluginClients, type PluginEndpointResolver } from '@platform/plugin';

/** The upgrade mode stored: upstream's reading, libs/plugin's (NONE is AUTO). */
export { upgradeModeOf } from '@platform/plugin';

/**
 * Identity's side of the plugin protocol (docs/decisions/plugins.md "External auth"): where external
 * auth plugins answer (the plugin module's table, through the resolver) and the gRPC clients to call
 * them. main.ts always makes both; a test without them has only the built-in OIDC.
 */
export interface IdentityPlugins {
  resolver?: PluginEndpointResolver;
  clients: PluginClients;
}

/** The one external auth plugin built into identity: OpenID Connect. */
export const OIDC_PLUGIN_ID = 'plugin-oidc-identity-auth';

/** Marks the built-in OIDC as the choice (choosePlugin's `builtin`). */
export const OIDC_BUILTIN = 'oidc' as const;

/**
 * Which plugin serves a domain's external auth: a version published under `pluginId` (any id, the
 * built-in's included) wins; the built-in OIDC only when nothing is published under its id. The version
 * by libs/plugin's `resolveRequestOf` (MANUAL its version, without one a 400; else the newest). Throws a
 * 404 for another id with nothing published, a 503 when the plugin module's table cannot be read.
 */
export async function chooseAuthPlugin(
  plugins: IdentityPlugins | undefined,
  r: { domainId: string; pluginId: string; version?: string; upgradeMode?: string },
): Promise<PluginChoice<typeof OIDC_BUILTIN>> {
  return choosePlugin(plugins?.resolver, r.pluginId === OIDC_PLUGIN_ID ? OIDC_BUILTIN : undefined, resolveRequestOf(r));
}
