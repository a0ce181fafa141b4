import type { z } from 'zod';
import type { Logger } from '@platform/core';
import type { Access, AuthContext } from '@platform/auth';

export interface RequestContext {
  requestId: string;
  /** The caller's address: the socket's peer, or the client a trusted proxy names (`TRUST_PROXY`). */
  clientIp: string;
  logger: Logger;
  /** The caller; present on every operation that is not public. */
  auth: AuthContext;
}

/** One operation: its path, request schema, who may call it, and the handler. The whole contract in one entry. */
export interface Operation<S extends z.ZodType = z.ZodType> {
  path: string;
  schema: S;
  /** `public` operations take no token (token issue/grant, webhook ingestion). */
  access: Access | 'public';
  summary?: string;
  handler: (input: z.output<S>, ctx: RequestContext) => Promise<unknown> | unknown;
}

/** Keeps the handler's input typed by its schema. */
export function operation<S extends z.ZodType>(def: Operation<S>): Operation<S> {
  return def;
}

/** List responses: `{results, total_count}`. */
export function listResponse<T>(results: T[], total_count: number) {
  return { results, total_count };
}
