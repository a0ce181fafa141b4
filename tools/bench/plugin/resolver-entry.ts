// What the endpoint resolver benchmark loads (bundled as the apps are).
export { EndpointChanges, PluginEndpointResolver, tableSource } from '@platform/plugin';
