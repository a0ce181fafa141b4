import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

/** CollectionInfo (the contract; `''` where nothing collected it). */
export const CollectionInfo = z
  .strictObject({ service_account_id: z.string(), secret_id: z.string(), collector_id: z.string(), last_collected_at: z.string() })
  .meta({ id: 'CollectionInfo' });

/** CloudServiceReference: the resource's id at its provider and a link to it (`''` when unknown). */
export const CloudServiceReference = z.strictObject({ resource_id: z.string(), external_link: z.string() }).meta({ id: 'CloudServiceReference' });

/** CloudServiceInfo (the contract); a deleted record is `state: DELETED` with `deleted_at`. */
export const CloudServiceInfo = z
  .strictObject({
    cloud_service_id: z.string(),
    name: z.string(),
    state: z.enum(['ACTIVE', 'DELETED']),
    ip_addresses: z.array(z.string()),
    account: z.string(),
    instance_type: z.string(),
    instance_size: z.number(),
    cloud_service_type: z.string(),
    cloud_service_group: z.string(),
    provider: z.string(),
    data: structOut,
    metadata: structOut,
    reference: CloudServiceReference,
    tags: structOut,
    tag_keys: structOut,
    collection_info: CollectionInfo,
    region_code: z.string(),
    domain_id: z.string(),
    workspace_id: z.string(),
    project_id: z.string(),
    launched_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
    deleted_at: timestamp,
  })
  .meta({ id: 'CloudServiceInfo' });

export const CloudServicesInfo = listOf(CloudServiceInfo).meta({ id: 'CloudServicesInfo' });

/** The answer of export: where to download the file (a short-lived, single-domain URL). */
export const ExportInfo = z.strictObject({ download_url: z.string() }).meta({ id: 'ExportInfo' });
