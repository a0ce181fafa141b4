import { z } from 'zod';
import { listOf, structOut, timestamp } from '@platform/http';
import { EVENT_TYPES } from './service';

/**
 * EventInfo of opsflow (the contract) with upstream's current names `created_type` / `created_by`
 * answered beside the older `user_type` / `user_id` (the same values), and `additional_info`.
 */
export const OpsflowEventInfo = z
  .strictObject({
    event_id: z.string(),
    event_type: z.enum(EVENT_TYPES),
    name: z.string(),
    description: z.string(),
    created_type: z.string(),
    created_by: z.string(),
    user_type: z.string(),
    user_id: z.string(),
    additional_info: structOut,
    domain_id: z.string(),
    workspace_id: z.string(),
    project_id: z.string(),
    task_id: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'EventInfo' });

export const OpsflowEventsInfo = listOf(OpsflowEventInfo).meta({ id: 'EventsInfo' });
