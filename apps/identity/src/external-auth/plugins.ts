import { choosePlugin, type PluginChoice, type PluginClients, type PluginEndpointResolver } from '@platform/plugin';
import type { UpgradeMode } from '@platform/plugin';

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

/** upstream's upgrade modes; NONE (an old value) is AUTO. */
export function upgradeModeOf(mode: string | undefined): UpgradeMode {
  return mode === 'MANUAL' ? 'MANUAL' : 'AUTO';
}

/**
 * Which plugin serves a domain's external auth: a version published under `pluginId` (any id, the
 * built-in's included) wins; the built-in OIDC only when nothing is published under its id. Throws a
 * 404 for another id with nothing published, a 503 when the plugin module's table cannot be read.
 */
export function chooseAuthPlugin(
  plugins: IdentityPlugins | undefined,
  r: { domainId: string; pluginId: string; version?: string; upgradeMode?: string },
): Promise<PluginChoice<typeof OIDC_BUILTIN>> {
  return choosePlugin(plugins?.resolver, r.pluginId === OIDC_PLUGIN_ID ? OIDC_BUILTIN : undefined, {
    domainId: r.domainId,
    pluginId: r.pluginId,
    version: r.version ?? '',
    upgradeMode: upgradeModeOf(r.upgradeMode),
  });
}
