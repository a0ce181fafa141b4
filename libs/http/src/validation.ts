import { z } from 'zod';
import { type ApiError, zodIssuesToApiError } from '@platform/errors';
import { withoutProto3Defaults } from './proto3';

/** The first zod issue as upstream's error (libs/errors, zodIssuesToApiError). */
export function zodToApiError(error: z.ZodError, input?: unknown): ApiError {
  return zodIssuesToApiError(error, input);
}

export function parseInput<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw zodToApiError(r.error, body);
  return r.data;
}

/**
 * An operation's request as its handler gets it: optional fields at their proto3 defaults read as
 * absent (see proto3.ts), then the whole body validated by the operation's schema.
 */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  return parseInput(schema, withoutProto3Defaults(schema, body));
}
