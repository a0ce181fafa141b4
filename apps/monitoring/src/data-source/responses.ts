import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { StoredPluginInfo } from '../plugins/plugin-info';
import { UPGRADE_MODES, type Struct } from '../plugins/registry';
import type { DataSourceRow } from './repository';

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

/** A row as DataSourceInfo: plugin_info with its secret_id and provider, ISO created_at. */
export function toDataSourceInfo(r: DataSourceRow) {
  const p = (r.plugin_info ?? {}) as StoredPluginInfo;
  return {
    data_source_id: r.data_source_id,
    name: r.name,
    state: r.state,
    monitoring_type: r.monitoring_type,
    provider: r.provider,
    capability: (r.capability ?? {}) as Struct,
    plugin_info: {
      plugin_id: p.plugin_id,
      version: p.version,
      options: p.options ?? {},
      metadata: p.metadata ?? {},
      upgrade_mode: p.upgrade_mode,
      secret_id: (p.secret_id as string | undefined) ?? '',
      provider: (p.provider as string | undefined) ?? '',
    },
    tags: (r.tags ?? {}) as Struct,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
  };
}
