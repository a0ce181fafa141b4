import { errors } from '@platform/errors';
import type { CostDataSourcePlugin } from './types';

/** Plugins by plugin_id. Built-ins are registered at start; an HTTP plugin endpoint could be added later. */
export class PluginRegistry {
  private readonly plugins = new Map<string, CostDataSourcePlugin>();

  register(plugin: CostDataSourcePlugin): this {
    if (this.plugins.has(plugin.plugin_id)) throw new Error(`plugin ${plugin.plugin_id} registered twice`);
    this.plugins.set(plugin.plugin_id, plugin);
    return this;
  }

  get(pluginId: string): CostDataSourcePlugin {
    const p = this.plugins.get(pluginId);
    if (!p) throw errors.notFound('plugin_id', pluginId);
    return p;
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
