import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { Struct } from '../plugins/registry';
import type { StoredEventRow } from './repository';

/** The resource an event is about, as the samples show it (`{}` when the event names none). */
export const EventResource = z
  .strictObject({ resource_id: z.string().optional(), resource_type: z.string().optional(), name: z.string().optional() })
  .meta({ id: 'EventResource' });

/** EventInfo of monitoring (the contract): both `resource` (samples) and `resources` (the proto). */
export const EventInfo = z
  .strictObject({
    event_id: z.string(),
    event_key: z.string(),
    event_type: z.string(),
    title: z.string(),
    description: z.string(),
    severity: z.string(),
    rule: z.string(),
    image_url: z.string(),
    resource: EventResource,
    resources: z.array(z.string()),
    provider: z.string(),
    account: z.string(),
    additional_info: structOut,
    raw_data: structOut,
    domain_id: z.string(),
    workspace_id: z.string(),
    project_id: z.string(),
    alert_id: z.string(),
    webhook_id: z.string(),
    created_at: timestamp,
    occurred_at: timestamp,
  })
  .meta({ id: 'EventInfo' });

export const EventsInfo = listOf(EventInfo).meta({ id: 'EventsInfo' });

/** A row as EventInfo: `resources` from the resource's id, empty objects for missing JSON, ISO timestamps. */
export function toEventInfo(r: StoredEventRow) {
  const resource = (r.resource ?? {}) as { resource_id?: string; resource_type?: string; name?: string };
  return {
    event_id: r.event_id,
    event_key: r.event_key,
    event_type: r.event_type,
    title: r.title,
    description: r.description,
    severity: r.severity,
    rule: r.rule,
    image_url: r.image_url,
    resource,
    resources: resource.resource_id ? [resource.resource_id] : [],
    provider: r.provider,
    account: r.account,
    additional_info: (r.additional_info ?? {}) as Struct,
    raw_data: (r.raw_data ?? {}) as Struct,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    alert_id: r.alert_id,
    webhook_id: r.webhook_id,
    created_at: isoOrEmpty(r.created_at),
    occurred_at: isoOrEmpty(r.occurred_at),
  };
}
