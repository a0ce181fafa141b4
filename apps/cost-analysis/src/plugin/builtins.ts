import type { CostAnalysisConfig } from '../config';
import { httpFilePlugin } from './http-file';
import { PluginRegistry } from './registry';

/** The registry with every built-in plugin. */
export function builtinPlugins(config: CostAnalysisConfig): PluginRegistry {
  return new PluginRegistry().register(httpFilePlugin({ outbound: config.outbound, limits: config.limits }));
}
