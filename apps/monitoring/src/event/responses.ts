import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';

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
