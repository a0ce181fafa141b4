import { createHash, timingSafeEqual } from 'node:crypto';
import type express from 'express';
import { z } from 'zod';
import { errors } from '@platform/errors';
import { id, name, parseInput, type RouteHelpers } from '@platform/http';
import { parseIso8601 } from '@platform/query';
import type { OpsflowConfig } from '../config';
import { EVENT_TYPES } from './responses';
import type { EventService } from './service';

export const INGEST_PATH = '/opsflow/v1/event/create';

/** What a task action posts: the task, the acting user, the scope, and an idempotency key. */
export const recordSchema = z.strictObject({
  event_key: id,
  domain_id: id,
  workspace_id: id.optional(),
  project_id: id,
  task_id: id,
  event_type: z.enum(EVENT_TYPES),
  name,
  description: z.string().max(10_000).optional(),
  user_type: z.enum(['USER', 'APP']).default('USER'),
  user_id: id,
  additional_info: z.record(z.string(), z.unknown()).optional(),
  created_at: z
    .string()
    .refine((v) => parseIso8601(v) !== null, 'an ISO 8601 timestamp')
    .optional(),
});

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Compares the bearer token with every configured one in constant time (digests make the lengths equal). */
export function ingestAuthorized(header: string | undefined, tokens: string[]): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m || !tokens.length) return false;
  const given = digest(m[1]);
  let ok = false;
  for (const t of tokens) ok = timingSafeEqual(given, digest(t)) || ok;
  return ok;
}

/**
 * The way events come in: task actions (the task side of opsflow, or any workflow tool acting on
 * tasks) POST each action here with a service token. Not a user operation: a user's access token is
 * refused, so users cannot forge history. Dispatched ahead of Express as the operations are; the
 * service token is checked from the headers before a byte of the body is read.
 */
export function ingestRoute(config: OpsflowConfig, service: EventService) {
  return (app: express.Express, { post, readJson }: RouteHelpers) => {
    post(INGEST_PATH, INGEST_PATH, async (req, _params, ctx) => {
      if (!ingestAuthorized(req.headers.authorization, config.ingestTokens)) {
        throw errors.authenticateFailure(
          config.ingestTokens.length ? 'A valid event ingestion token is required.' : 'Event ingestion is not configured (OPSFLOW_INGEST_TOKENS).',
        );
      }
      const { event, created } = await service.record(parseInput(recordSchema, await readJson(req)));
      ctx.logger.info({ event_id: event.event_id, created }, 'opsflow event recorded');
      return event;
    });
    app.all(INGEST_PATH, (req, _res, next) => next(errors.methodNotAllowed(req.method)));
  };
}
