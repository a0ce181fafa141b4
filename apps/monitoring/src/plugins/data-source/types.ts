import type { OutboundPolicy } from '@platform/net';
import type { PluginBase, Struct } from '../registry';

export interface VerifyContext {
  outbound: OutboundPolicy;
}

/** A data-source plugin: collects metrics or logs; `verify` proves its options work against the real source. */
export interface DataSourcePlugin extends PluginBase {
  monitoring_type: 'METRIC' | 'LOG';
  verify(options: Struct, ctx: VerifyContext): Promise<void>;
}
