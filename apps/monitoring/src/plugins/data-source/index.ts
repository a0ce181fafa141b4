import { PluginRegistry } from '../registry';
import { prometheusDataSource } from './prometheus';
import type { DataSourcePlugin } from './types';

export type { DataSourcePlugin, VerifyContext } from './types';

export function dataSourcePlugins(): PluginRegistry<DataSourcePlugin> {
  return new PluginRegistry('data source', [prometheusDataSource]);
}
