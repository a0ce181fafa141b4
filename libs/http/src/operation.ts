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
  /**
   * The answer's schema (responses.ts: an Info, `listOf(Info)`, `StatResult`, `Empty`): emitted in the
   * OpenAPI document, and every answer is checked against it in tests (strict: an unknown field fails).
   */
  response: z.ZodType;
  /**
   * The error codes this operation gives besides the ones every operation can give (`operationErrors` in
   * responses.ts), by status: `{404: ['ERROR_NOT_FOUND'], 409: ['ERROR_ALREADY_EXISTS']}`.
   */
  errors?: ErrorCodes;
  handler: (input: z.output<S>, ctx: RequestContext) => Promise<unknown> | unknown;
}

/** Error codes by HTTP status. */
export type ErrorCodes = Readonly<Partial<Record<number, readonly string[]>>>;

/** Keeps the handler's input typed by its schema. */
export function operation<S extends z.ZodType>(def: Operation<S>): Operation<S> {
  return def;
}

/** List responses: `{results, total_count}`. */
export function listResponse<T>(results: T[], total_count: number) {
  return { results, total_count };
}
