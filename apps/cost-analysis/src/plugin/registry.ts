import { errors } from '@platform/errors';
import { choosePlugin, resolveRequestOf, type PluginClients, type PluginEndpointResolver, type StreamOptions } from '@platform/plugin';
import { remoteCostPlugin } from './remote';
import type { CostDataSourcePlugin } from './types';

/** Where published plugins are found and called: the process's resolver and gRPC clients. */
export interface RemotePlugins {
  resolver: PluginEndpointResolver;
  clients: PluginClients;
  /** Bounds of a get_data stream. */
  stream?: Omit<StreamOptions, 'signal'>;
}

/** The plugin that serves a data source, and the version it serves. */
export interface ChosenPlugin {
  plugin: CostDataSourcePlugin;
  version: string;
  /** A published container (true) or a built-in (false). */
  remote: boolean;
}

/** What a data source names: its plugin_info. */
export interface PluginRef {
  plugin_id: string;
  version?: string;
  upgrade_mode?: string;
}

/**
 * Plugins by plugin_id: the built-ins, registered at start, and (with `remote`) the versions published
 * through the plugin module, chosen by libs/plugin `choosePlugin` (docs/decisions/plugins.md "Cost
 * data sources"): a published version wins, even under a built-in's id; a built-in serves only when
 * nothing is published; an unreadable plugin table is a 503.
 */
export class PluginRegistry {
  private readonly plugins = new Map<string, CostDataSourcePlugin>();
  private remotePlugins?: RemotePlugins;

  register(plugin: CostDataSourcePlugin): this {
    if (this.plugins.has(plugin.plugin_id)) throw new Error(`plugin ${plugin.plugin_id} registered twice`);
    this.plugins.set(plugin.plugin_id, plugin);
    return this;
  }

  /** Published plugins are resolved and called through these (none: built-ins only). */
  useRemote(remote: RemotePlugins | undefined): this {
    this.remotePlugins = remote;
    return this;
  }

  /** A built-in by id. */
  get(pluginId: string): CostDataSourcePlugin {
    const p = this.plugins.get(pluginId);
    if (!p) throw errors.notFound('plugin_id', pluginId);
    return p;
  }

  /**
   * The plugin serving `ref` in `domainId`, by libs/plugin's rules (docs/decisions/plugins.md "Upgrade
   * mode"): MANUAL the version named (without one a 400), AUTO, NONE and no mode the newest, of the
   * published versions or of a built-in's.
   */
  async choose(domainId: string, ref: PluginRef): Promise<ChosenPlugin> {
    const remote = this.remotePlugins;
    const request = resolveRequestOf({ domainId, pluginId: ref.plugin_id, version: ref.version, upgradeMode: ref.upgrade_mode });
    const choice = await choosePlugin(remote?.resolver, this.plugins.get(ref.plugin_id), request);
    if (choice.kind === 'builtin') return { plugin: choice.plugin, version: this.resolveVersion(choice.plugin, request.version), remote: false };
    const client = remote!.clients.cost(choice.endpoint, ref.plugin_id);
    return { plugin: remoteCostPlugin(client, { plugin_id: ref.plugin_id, version: choice.updated_version, stream: remote!.stream }), version: choice.updated_version, remote: true };
  }

  /** The version to use: the one asked for (it must exist) or the newest. */
  resolveVersion(plugin: CostDataSourcePlugin, version: string | undefined): string {
    if (!version) return plugin.versions[plugin.versions.length - 1];
    if (!plugin.versions.includes(version)) {
      throw errors.invalidParameter('plugin_info.version', `${plugin.plugin_id} has no version ${version} (known: ${plugin.versions.join(', ')})`);
    }
    return version;
  }

  /** Options must carry the plugin's required keys. */
  checkOptions(plugin: CostDataSourcePlugin, options: Record<string, unknown>): void {
    for (const k of plugin.required_keys) {
      if (options[k] === undefined || options[k] === null || options[k] === '') throw errors.requiredParameter(`plugin_info.options.${k}`);
    }
  }
}
