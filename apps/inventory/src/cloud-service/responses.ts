import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { CloudServiceRow } from './repository';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

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

/** A stored row as CloudServiceInfo (`''` for what is unknown). */
export function toCloudServiceInfo(r: CloudServiceRow) {
  const reference = obj(r.reference);
  const ci = obj(r.collection_info);
  return {
    cloud_service_id: r.cloud_service_id,
    name: r.name,
    state: r.state,
    ip_addresses: r.ip_addresses ?? [],
    account: r.account,
    instance_type: r.instance_type,
    instance_size: r.instance_size,
    cloud_service_type: r.cloud_service_type,
    cloud_service_group: r.cloud_service_group,
    provider: r.provider,
    data: obj(r.data),
    metadata: obj(r.metadata),
    reference: { resource_id: String(reference.resource_id ?? ''), external_link: String(reference.external_link ?? '') },
    tags: obj(r.tags),
    tag_keys: obj(r.tag_keys),
    collection_info: {
      service_account_id: String(ci.service_account_id ?? ''),
      secret_id: String(ci.secret_id ?? ''),
      collector_id: String(ci.collector_id ?? ''),
      last_collected_at: String(ci.last_collected_at ?? ''),
    },
    region_code: r.region_code,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    launched_at: isoOrEmpty(r.launched_at),
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at),
    deleted_at: isoOrEmpty(r.deleted_at),
  };
}
