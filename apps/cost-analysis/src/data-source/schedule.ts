import { z } from 'zod';
import { errors } from '@platform/errors';
import { explicitZero } from '@platform/http';

/**
 * A data source's `schedule`: upstream's Schedule ({state, hour}, api 2.0.435) and the list form
 * ({state, hours}) the users send. ENABLED syncs the data source daily at each hour (UTC).
 */
const hour = z.number().int().min(0).max(23);
export const scheduleInput = z.strictObject({
  state: z.enum(['ENABLED', 'DISABLED']).optional(),
  hour: hour.optional(),
  // `hours` is ours (upstream's Schedule has one `hour`): its `[]` means "no hours", not "not set"
  // (docs/decisions/cost-analysis.md). Upstream's `hour: 0` and `state: NONE` are proto3 defaults: not set.
  hours: explicitZero(
    z
      .array(hour)
      .max(24)
      .refine((h) => new Set(h).size === h.length, { message: 'hours must be unique' })
      .optional(),
  ),
});
export type ScheduleInput = z.infer<typeof scheduleInput>;

export interface Schedule {
  state: 'ENABLED' | 'DISABLED';
  hours: number[];
}

const HOUR_MS = 3_600_000;

/**
 * The schedule a register/update stores: `hours` wins (a `hour` given with it must be one of them),
 * else `hour`, else the stored hours (so `{state: DISABLED}` and back keeps them). State defaults to
 * ENABLED as upstream's; ENABLED needs an hour (upstream's "Need to set an hour").
 */
export function resolveSchedule(input: ScheduleInput, stored: Schedule): Schedule {
  let hours = stored.hours;
  if (input.hours !== undefined) {
    if (input.hour !== undefined && !input.hours.includes(input.hour)) {
      throw errors.invalidParameter('schedule.hour', `hour ${input.hour} is not one of schedule.hours; give one of the two`);
    }
    hours = input.hours;
  } else if (input.hour !== undefined) {
    hours = [input.hour];
  }
  const state = input.state ?? 'ENABLED';
  if (state === 'ENABLED' && hours.length === 0) {
    throw errors.invalidParameter('schedule.hours', 'Need to set an hour when the state is ENABLED.');
  }
  return { state, hours: [...hours].sort((a, b) => a - b) };
}

/** The first slot (a whole UTC hour in `hours`) strictly after `after`. */
export function nextSlot(hours: readonly number[], after: Date): Date | null {
  if (!hours.length) return null;
  const set = new Set(hours);
  let t = Math.floor(after.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  for (let i = 0; i < 24; i++, t += HOUR_MS) {
    if (set.has(new Date(t).getUTCHours())) return new Date(t);
  }
  return null;
}

/** When the scheduler syncs a data source next: null unless both it and its schedule are ENABLED. */
export function nextSyncAt(dsState: string, schedule: Schedule, after: Date): Date | null {
  if (dsState !== 'ENABLED' || schedule.state !== 'ENABLED') return null;
  return nextSlot(schedule.hours, after);
}

/** The `schedule` of DataSourceInfo: upstream's `hour` (the earliest of the hours) and all `hours`. */
export function toScheduleInfo(state: string, hours: number[] | null) {
  const h = [...(hours ?? [])].sort((a, b) => a - b);
  return { state, hour: h.length ? h[0] : null, hours: h };
}
