import type { PluginBase, PluginRegistry, Struct, UpgradeMode } from './registry';

/** plugin_info as stored on a data source or webhook. */
export interface StoredPluginInfo {
  plugin_id: string;
  version: string;
  options: Struct;
  metadata: Struct;
  upgrade_mode: UpgradeMode;
  [extra: string]: unknown;
}

export interface PluginInfoInput {
  plugin_id: string;
  version?: string;
  options?: Struct;
  upgrade_mode?: UpgradeMode;
}

/**
 * The plugin_info to store: the plugin exists, the version resolved (AUTO → latest), the options
 * satisfy the plugin and the metadata is the plugin's for these options. Register/create and
 * update-plugin both end here, so stored plugin_info is always valid for its version.
 */
export function resolvePluginInfo<P extends PluginBase>(registry: PluginRegistry<P>, input: PluginInfoInput): { plugin: P; info: StoredPluginInfo } {
  const plugin = registry.get(input.plugin_id);
  const upgrade_mode = input.upgrade_mode ?? 'AUTO';
  const version = registry.resolveVersion(plugin, input.version, upgrade_mode);
  const options = input.options ?? {};
  registry.validateOptions(plugin, options);
  return { plugin, info: { plugin_id: plugin.plugin_id, version, options, metadata: plugin.metadata(options), upgrade_mode } };
}

/** update-plugin: given fields replace the stored ones, then everything is resolved again (metadata refreshed). */
export function updatedPluginInfo<P extends PluginBase>(
  registry: PluginRegistry<P>,
  current: StoredPluginInfo,
  change: { version?: string; options?: Struct; upgrade_mode?: UpgradeMode },
) {
  const upgrade_mode = change.upgrade_mode ?? current.upgrade_mode;
  return resolvePluginInfo(registry, {
    plugin_id: current.plugin_id,
    version: change.version ?? current.version,
    options: change.options ?? current.options,
    upgrade_mode,
  });
}

/** verify-plugin: the stored plugin and version still exist and the options still satisfy it. */
export function checkStoredPluginInfo<P extends PluginBase>(registry: PluginRegistry<P>, current: StoredPluginInfo) {
  return resolvePluginInfo(registry, current);
}
