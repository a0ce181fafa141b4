import { ApiError, errors } from '@platform/errors';
import { choosePlugin, resolveRequestOf, type Monitoring, type PluginChoice, type PluginClients, type PluginEndpointResolver } from '@platform/plugin';
import type { PluginInfoInput, StoredPluginInfo } from './plugin-info';
import { resolvePluginInfo } from './plugin-info';
import type { PluginBase, PluginRegistry, Struct, UpgradeMode } from './registry';

/**
 * Published plugins (issue #28): where they answer (the plugin module's table, through the resolver's
 * cache) and the gRPC clients that call them. Absent (a test, a module run without the plugin module):
 * only the built-ins exist.
 */
export interface RemotePlugins {
  resolver: PluginEndpointResolver;
  clients: PluginClients;
}

/**
 * The plugin serving (domain, plugin_id, version, upgrade_mode), by libs/plugin's rules
 * (docs/decisions/plugins.md "Built-in ids", "Upgrade mode"): MANUAL its version (without one a 400),
 * anything else the newest; a published version wins, a built-in serves only when nothing is published
 * for its id, an unreadable table is 503. Without `remote`, the built-in or 404.
 */
export async function chooseMonitoringPlugin<P extends PluginBase>(
  remote: RemotePlugins | undefined,
  registry: PluginRegistry<P>,
  domainId: string,
  pluginId: string,
  version: string | undefined,
  mode: UpgradeMode,
): Promise<PluginChoice<P>> {
  const request = resolveRequestOf({ domainId, pluginId, version, upgradeMode: mode });
  if (!remote) return { kind: 'builtin', plugin: registry.get(pluginId) };
  try {
    return await choosePlugin(remote.resolver, registry.find(pluginId), request);
  } catch (e) {
    // The resolver's 404 names `plugin_id`; the request's field is plugin_info.plugin_id.
    if (e instanceof ApiError && e.status === 404) throw errors.notFound('plugin_info.plugin_id', pluginId);
    throw e;
  }
}

export type ResolvedPlugin<P> = { kind: 'builtin'; plugin: P; info: StoredPluginInfo } | { kind: 'remote'; endpoint: string; info: StoredPluginInfo; metadata: Struct };

/**
 * plugin_info to store for register/create/update-plugin/verify-plugin. A built-in: the checks of
 * resolvePluginInfo. A published plugin: the version it serves, the options as given (the plugin
 * checks them: `init` refuses what it does not take) and the metadata its `init` answers.
 */
export async function resolveChosenPluginInfo<P extends PluginBase>(
  remote: RemotePlugins | undefined,
  registry: PluginRegistry<P>,
  domainId: string,
  input: PluginInfoInput,
  init: (endpoint: string, options: Struct) => Promise<Struct>,
): Promise<ResolvedPlugin<P>> {
  const upgrade_mode = input.upgrade_mode ?? 'AUTO';
  const choice = await chooseMonitoringPlugin(remote, registry, domainId, input.plugin_id, input.version, upgrade_mode);
  if (choice.kind === 'builtin') return { kind: 'builtin', ...resolvePluginInfo(registry, input) };
  const options = input.options ?? {};
  const metadata = await init(choice.endpoint, options);
  return { kind: 'remote', endpoint: choice.endpoint, metadata, info: { plugin_id: input.plugin_id, version: choice.updated_version, options, metadata, upgrade_mode } };
}

/** The one client of a published plugin (observed under its plugin id). */
export const monitoringClient = (remote: RemotePlugins, endpoint: string, pluginId: string) => remote.clients.monitoring(endpoint, pluginId);

/** The resource an event names: upstream's EventResource (resource_id, resource_type, name), strings only. */
function resourceOf(r: Monitoring.EventInfo['resource']): { resource_id?: string; resource_type?: string; name?: string } {
  const out: { resource_id?: string; resource_type?: string; name?: string } = {};
  for (const k of ['resource_id', 'resource_type', 'name'] as const) {
    const v = Object.prototype.hasOwnProperty.call(r, k) ? r[k] : undefined;
    if (typeof v === 'string' && v) out[k] = v;
  }
  return out;
}

/**
 * One event of Event.parse's answer as monitoring stores it (upstream's `_create_event`): the fields of
 * EventInfo as they are; severity NONE, provider and account '' when not set (proto3's defaults);
 * an occurred_at that is not a date is unknown. event_type and severity are checked by the store's
 * toRow (an unknown one makes the delivery's ERROR event).
 */
export function parsedEventOf(e: Monitoring.EventInfo) {
  return {
    event_key: e.event_key,
    event_type: e.event_type as 'ALERT' | 'RECOVERY' | 'ERROR',
    title: e.title,
    description: e.description,
    severity: (typeof e.severity === 'string' ? e.severity : `unknown severity ${e.severity}`) as 'NONE',
    rule: e.rule,
    image_url: e.image_url,
    resource: resourceOf(e.resource ?? {}),
    provider: e.provider,
    account: e.account,
    occurred_at: e.occurred_at || null,
    additional_info: e.additional_info ?? {},
  };
}
