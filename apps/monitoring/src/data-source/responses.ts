import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';
import { UPGRADE_MODES } from '../plugins/registry';

/** DataSourcePluginInfo (the contract; `secret_id` / `provider` `''` when not given). */
export const DataSourcePluginInfo = z
  .strictObject({
    plugin_id: z.string(),
    version: z.string(),
    options: structOut,
    metadata: structOut,
    upgrade_mode: z.enum(UPGRADE_MODES),
    secret_id: z.string(),
    provider: z.string(),
  })
  .meta({ id: 'DataSourcePluginInfo' });

/** DataSourceInfo of monitoring (the contract). */
export const DataSourceInfo = z
  .strictObject({
    data_source_id: z.string(),
    name: z.string(),
    state: z.enum(['ENABLED', 'DISABLED']),
    monitoring_type: z.enum(['METRIC', 'LOG']),
    provider: z.string(),
    capability: structOut,
    plugin_info: DataSourcePluginInfo,
    tags: structOut,
    domain_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'DataSourceInfo' });

export const DataSourcesInfo = listOf(DataSourceInfo).meta({ id: 'DataSourcesInfo' });
