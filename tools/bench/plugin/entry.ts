// What the plugin stream benchmark loads (bundled as the apps are): the clients and the kit.
export { PluginClients, pluginClientConfigFromEnv } from '@platform/plugin';
export { serveCostDataSource } from '@platform/plugin-kit';
