import { createHash } from 'node:crypto';
import type { StoredPluginInfo } from '../plugins/plugin-info';

/** A webhook as ingestion reads it (from PostgreSQL, the cache or the Redis copy). */
export interface IngestWebhook {
  webhook_id: string;
  name: string;
  domain_id: string;
  workspace_id: string;
  project_id: string;
  state: string;
  plugin_info: StoredPluginInfo;
  /** keyDigest(access_key): the key itself is not kept (nor is it in the Redis copy). */
  key_digest: Buffer;
}

/** SHA-256 of an access key: keys are compared as digests (see sameKey). */
export const keyDigest = (key: string) => createHash('sha256').update(key).digest();
