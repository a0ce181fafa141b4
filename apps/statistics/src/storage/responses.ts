import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

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
