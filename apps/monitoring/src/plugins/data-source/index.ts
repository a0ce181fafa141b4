import { PluginRegistry, type PluginBase, type Struct } from '../registry';
import { prometheusDataSource } from './prometheus';

export interface VerifyContext {
  allowPrivateUrls: boolean;
}

/** A data-source plugin: collects metrics or logs; `verify` proves its options work against the real source. */
export interface DataSourcePlugin extends PluginBase {
  monitoring_type: 'METRIC' | 'LOG';
  verify(options: Struct, ctx: VerifyContext): Promise<void>;
}

export function dataSourcePlugins(): PluginRegistry<DataSourcePlugin> {
  return new PluginRegistry('data source', [prometheusDataSource]);
}
