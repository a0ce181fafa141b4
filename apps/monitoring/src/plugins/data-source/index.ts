import { PluginRegistry, type PluginBase, type Struct } from '../registry';
import { prometheusDataSource } from './prometheus';
import type { OutboundPolicy } from '@platform/net';

export interface VerifyContext {
  outbound: OutboundPolicy;
}

/** A data-source plugin: collects metrics or logs; `verify` proves its options work against the real source. */
export interface DataSourcePlugin extends PluginBase {
  monitoring_type: 'METRIC' | 'LOG';
  verify(options: Struct, ctx: VerifyContext): Promise<void>;
}

export function dataSourcePlugins(): PluginRegistry<DataSourcePlugin> {
  return new PluginRegistry('data source', [prometheusDataSource]);
}
