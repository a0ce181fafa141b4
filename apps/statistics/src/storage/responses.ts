import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { StorageRow, StoredPluginInfo } from './repository';

type Struct = Record<string, unknown>;

/** plugin_info of a storage registered without a plugin. */
export const EMPTY_PLUGIN: StoredPluginInfo = { plugin_id: '', version: '', options: {}, secret_id: '', metadata: {} };

/** PluginInfo of a storage (secret data never answered; `secret_id` names the sealed secret). */
export const StoragePluginInfo = z
  .strictObject({ plugin_id: z.string(), version: z.string(), options: structOut, secret_id: z.string(), metadata: structOut })
  .meta({ id: 'StoragePluginInfo' });

/** StorageInfo (the contract; an empty `plugin_info` for a storage registered without a plugin). */
export const StorageInfo = z
  .strictObject({
    storage_id: z.string(),
    name: z.string(),
    state: z.enum(['ENABLED', 'DISABLED']),
    options: structOut,
    capability: structOut,
    plugin_info: StoragePluginInfo,
    tags: structOut,
    user_id: z.string(),
    domain_id: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'StorageInfo' });

/** StoragesInfo: the list message. */
export const StoragesInfo = listOf(StorageInfo).meta({ id: 'StoragesInfo' });

/** A stored row as StorageInfo (the secret named by its id only). */
export function toStorageInfo(r: StorageRow) {
  const p = { ...EMPTY_PLUGIN, ...((r.plugin_info ?? {}) as Partial<StoredPluginInfo>) };
  return {
    storage_id: r.storage_id,
    name: r.name,
    state: r.state,
    options: (r.options ?? {}) as Struct,
    capability: (r.capability ?? {}) as Struct,
    plugin_info: { plugin_id: p.plugin_id, version: p.version, options: p.options, secret_id: p.secret_id, metadata: p.metadata },
    tags: (r.tags ?? {}) as Struct,
    user_id: r.user_id,
    domain_id: r.domain_id,
    created_at: isoOrEmpty(r.created_at),
  };
}
