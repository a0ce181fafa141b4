// Error handling: what a failure becomes (its envelope and status), what is logged of it, and its answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { repeatFilter, type Logger } from '@platform/core';
import { ApiError, errors, isApiError } from '@platform/errors';
import type { Operation } from './operation';
import { dependencyFault, sqlState } from './faults';
import { lingerAfterAnswer, sendJson } from './body';
import { answerObserver } from './responses';
import type { Exchange } from './exchange';

/** Errors from libraries that are the caller's fault, as envelopes; anything else is a 500. */
export function toApiError(err: unknown): ApiError | undefined {
  if (isApiError(err)) return err;
  const e = err as { type?: string; status?: number; expose?: boolean; code?: string; meta?: { target?: unknown } } | undefined;
  switch (e?.type) {
    case 'entity.too.large':
      return errors.payloadTooLarge((err as { limit?: number }).limit ? `${(err as { limit: number }).limit} bytes` : 'the limit');
    case 'entity.parse.failed':
      return errors.malformedJson();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return errors.unsupportedMediaType();
    case 'request.aborted':
      return new ApiError(400, 'ERROR_REQUEST_ABORTED', 'Request aborted.');
    case 'stream.encoding.set':
    case 'request.size.invalid':
      return errors.invalidArgument('Invalid request body.');
  }
  const fault = dependencyFault(err);
  if (fault) return fault;
  // Errors Express itself raises for a bad request: http-errors, and a malformed %-escape in a path.
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && (e.expose === true || err instanceof URIError)) {
    return new ApiError(e.status, 'ERROR_INVALID_ARGUMENT', 'Bad request.');
  }
  if (err instanceof URIError) return errors.invalidArgument('Malformed path.');
  // PostgreSQL refusing a value (class 22: a character it cannot store, a number out of its type's
  // range, NUL in a path parameter): the value's fault, answered without PostgreSQL's message.
  const state = sqlState(err);
  if (state?.startsWith('22')) return errors.invalidArgument('A value is not valid for its field (out of range, or a character that cannot be stored).');
  // Unique violations (pg 23505 or Prisma P2002) that a service did not anticipate.
  if (e?.code === '23505' || e?.code === 'P2002') return errors.conflict('ERROR_ALREADY_EXISTS', 'Resource already exists.');
  if (e?.code === 'P2025') return new ApiError(404, 'ERROR_NOT_FOUND', 'Resource not found.');
  return undefined;
}

export type AnswerError = (req: IncomingMessage, res: ServerResponse, ex: Exchange, err: unknown) => void;

/**
 * Every failure's answer (its envelope, logged when it is the platform's fault), for a request whose
 * socket may be gone: an answer that cannot be written ends it.
 */
export function errorAnswers(logger: Logger, byPath: ReadonlyMap<string, Operation>): AnswerError {
  const unavailableLog = repeatFilter();
  const logFailure = (ex: Exchange, err: unknown, apiError: ApiError | undefined): ApiError => {
    if (!apiError) {
      ex.log.error({ err, req_id: ex.requestId }, 'unexpected error');
      return errors.unknown();
    }
    if (apiError.code === 'ERROR_SERVICE_UNAVAILABLE') {
      // One line per distinct failure every 30 s (an outage fails every request), its first line only
      // (Prisma's messages go on with source excerpts).
      const message = String((err as Error)?.message ?? err).split('\n')[0].slice(0, 300);
      const repeats = unavailableLog(message);
      if (repeats >= 0) logger.warn({ err: message, req_id: ex.requestId, ...(repeats && { repeats }) }, 'dependency unavailable');
    } else if (apiError.status >= 500) {
      ex.log.error({ err, req_id: ex.requestId }, 'server error');
    } else if (typeof apiError.details?.outboundDetail === 'string') {
      // An outbound call's failure: the caller reads the uniform refusal, the log what happened.
      ex.log.warn({ key: apiError.details.key, outbound: apiError.details.outboundDetail, req_id: ex.requestId }, 'outbound call refused');
    }
    return apiError;
  };

  const sendError: AnswerError = (req, res, ex, err) => {
    const mapped = toApiError(err);
    // A body not read (refused before it was: no token, too large, another media type) is not parsed:
    // the connection closes after the answer, once what is still coming was dropped (bounded).
    if (!req.complete && !res.headersSent) lingerAfterAnswer(req, res);
    const retryAfter = mapped?.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number' && !res.headersSent) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
    const apiError = logFailure(ex, err, mapped);
    if (apiError.status === 405) res.setHeader('Allow', 'POST');
    const op = ex.operation === undefined ? undefined : byPath.get(ex.operation);
    if (op && !res.headersSent) answerObserver()?.answer(op, apiError.status, apiError.toEnvelope(), ex.input);
    if (!res.headersSent) sendJson(res, apiError.status, apiError.toEnvelope(), ex.requestId);
  };

  return (req, res, ex, err) => {
    try {
      sendError(req, res, ex, err);
    } catch {
      // the answer could not be written (the socket is gone): nothing to tell anyone
      if (!res.headersSent) res.destroy();
    }
  };
}
