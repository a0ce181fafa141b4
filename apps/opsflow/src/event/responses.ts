import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { EventRow } from './repository';

export const EVENT_TYPES = ['CREATED', 'UPDATED', 'CHANGE_STATUS', 'COMMENTED'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A stored row as EventInfo. */
export function toEventInfo(r: EventRow) {
  return {
    event_id: r.event_id,
    event_type: r.event_type,
    name: r.name,
    description: r.description,
    // upstream's current names, and the older ones (answered both: clients of either work)
    created_type: r.user_type,
    created_by: r.user_id,
    user_type: r.user_type,
    user_id: r.user_id,
    additional_info: (r.additional_info ?? {}) as Record<string, unknown>,
    domain_id: r.domain_id,
    workspace_id: r.workspace_id,
    project_id: r.project_id,
    task_id: r.task_id,
    created_at: isoOrEmpty(r.created_at),
    updated_at: isoOrEmpty(r.updated_at ?? r.created_at),
  };
}

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

