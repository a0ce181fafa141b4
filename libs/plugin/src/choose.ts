import { ApiError, errors } from '@platform/errors';
import { notPublished, type PluginEndpointResolver, type ResolveRequest } from './resolver';
import type { UpgradeMode } from './versions';

/**
 * Which plugin serves a data source, webhook or external auth (docs/decisions/plugins.md "Built-in
 * ids"): a version published for the domain (or by a public supervisor) wins, even under a built-in's
 * id; a built-in serves only when nothing is published for that id. Without a resolver (a module run
 * with no plugin module) only built-ins exist. A table that cannot be read is an error (503), never
 * a silent fall-back to the built-in: a domain that published its own plugin must not get another.
 */
export type PluginChoice<B> =
  | { kind: 'builtin'; plugin: B }
  | { kind: 'remote'; endpoint: string; version: string; updated_version: string };

/**
 * upstream's reading of a plugin_info's `upgrade_mode` (docs/decisions/plugins.md "Upgrade mode"):
 * MANUAL keeps its version; AUTO, NONE (proto3's "not set", which upstream stores as its default AUTO)
 * and no mode at all follow the newest published version.
 */
export function upgradeModeOf(mode: string | null | undefined): UpgradeMode {
  return mode === 'MANUAL' ? 'MANUAL' : 'AUTO';
}

/**
 * The resolver request for a plugin as a data source, webhook or external auth names it (its stored or
 * requested plugin_id, version and upgrade_mode), by upstream's one rule (plugin service
 * `get_plugin_endpoint`): MANUAL asks for exactly `version`, and without one is a 400 naming
 * `versionField`; any other mode asks for the newest version, whatever `version` says.
 */
export function resolveRequestOf(
  r: { domainId: string; pluginId: string; version?: string | null; upgradeMode?: string | null },
  versionField = 'plugin_info.version',
): ResolveRequest {
  if (upgradeModeOf(r.upgradeMode) === 'AUTO') return { domainId: r.domainId, pluginId: r.pluginId, version: '', upgradeMode: 'AUTO' };
  if (!r.version) throw errors.requiredParameter(versionField, 'upgrade_mode MANUAL needs the version');
  return { domainId: r.domainId, pluginId: r.pluginId, version: r.version, upgradeMode: 'MANUAL' };
}

export async function choosePlugin<B>(resolver: PluginEndpointResolver | undefined, builtin: B | undefined, r: ResolveRequest): Promise<PluginChoice<B>> {
  if (resolver) {
    let found;
    try {
      found = await resolver.find(r);
    } catch (err) {
      if (!(err instanceof ApiError)) throw errors.unavailable('Plugin endpoints cannot be read now; retry later.');
      throw err;
    }
    if (found) return { kind: 'remote', endpoint: found.endpoint, version: found.version, updated_version: found.updated_version };
    if (builtin === undefined) throw notPublished(r);
  }
  if (builtin === undefined) throw errors.notFound('plugin_id', r.pluginId);
  return { kind: 'builtin', plugin: builtin };
}
