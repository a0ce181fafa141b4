import { PluginRegistry } from './registry';
import { postgresqlStoragePlugin } from './postgresql';

/** The storage plugins this build ships with. */
export function builtinPlugins(): PluginRegistry {
  return new PluginRegistry([postgresqlStoragePlugin]);
}
