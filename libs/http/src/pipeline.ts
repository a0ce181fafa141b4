// The request pipeline every request takes: its exchange opened as it arrives (id, span), and, once its
// answer is written, its metrics and its one request line together (finish).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestLineWriter, type Logger } from '@platform/core';
import { endRequestSpan, inRequestSpan, startRequestSpan, tracingEnabled } from '@platform/telemetry';
import { sendJson } from './body';
import { Exchange, attachExchange, requestIdOf } from './exchange';
import type { AnswerError } from './failures';
import type { RequestMetrics } from './request-metrics';

export interface Pipeline {
  /** A request's exchange, made as it arrives and kept on its answer (where the error handler finds it). */
  open(req: IncomingMessage, res: ServerResponse): Exchange;
  /** Metrics and the request's log line, once its answer is written. */
  finish(ex: Exchange, method: string | undefined, rawPath: string, statusCode: number): void;
  /**
   * A request answered ahead of Express (an operation, a `post` route): its exchange, `work`'s answer
   * as a 200 (`{}` for none) or its throw as the envelope, then the request line and metrics.
   */
  answerAhead(label: string, path: string, req: IncomingMessage, res: ServerResponse, work: (ex: Exchange) => Promise<unknown>): unknown;
}

export function requestPipeline(logger: Logger, metrics: RequestMetrics, redactPath: (path: string) => string, answerError: AnswerError): Pipeline {
  // The one line per request: its fields are ours (ids, method, the redacted path, status, duration),
  // never a caller's value, so it is put together without the redaction pass every other line pays.
  const writeRequestLine = requestLineWriter(logger);

  const finish: Pipeline['finish'] = (ex, method, rawPath, statusCode) => {
    // Runs outside the request's try/catch: a throw here would be an uncaught exception.
    try {
      const ms = performance.now() - ex.start;
      metrics.observe(ex.operation ?? 'other', statusCode, ms / 1000);
      const span = ex.span;
      if (span) endRequestSpan(span, method ?? 'GET', ex.operation, statusCode);
      if (writeRequestLine) {
        writeRequestLine({
          req_id: ex.requestId,
          domain_id: ex.caller?.domain_id,
          user_id: ex.caller?.user_id,
          method,
          path: redactPath(rawPath),
          status: statusCode,
          duration_ms: Math.round(ms * 100) / 100,
          // The request's own trace (its server span), whatever span is active when the answer ends.
          trace_id: span?.ids?.trace_id,
          span_id: span?.ids?.span_id,
        });
      }
    } catch (e) {
      try {
        logger.error({ err: (e as Error)?.message, req_id: ex.requestId }, 'request hook failed');
      } catch {
        // nothing left to report with
      }
    }
  };

  const tracing = tracingEnabled();
  const open: Pipeline['open'] = (req, res) => {
    const ex = new Exchange(requestIdOf(req), logger, performance.now());
    attachExchange(res, ex);
    if (tracing) {
      // The span holds the path as the log line does: secret segments replaced, no query string.
      const url = req.url ?? '';
      const q = url.indexOf('?');
      ex.span = startRequestSpan(req, req.method ?? 'GET', redactPath(q < 0 ? url : url.slice(0, q)));
    }
    return ex;
  };

  const answer = async (ex: Exchange, path: string, req: IncomingMessage, res: ServerResponse, work: (ex: Exchange) => Promise<unknown>) => {
    try {
      sendJson(res, 200, await work(ex), ex.requestId);
    } catch (e) {
      answerError(req, res, ex, e);
    }
    finish(ex, req.method, path, res.statusCode);
  };
  const answerAhead: Pipeline['answerAhead'] = (label, path, req, res, work) => {
    const ex = open(req, res);
    ex.operation = label;
    // A sampled request runs with its span active (its statements and jobs under it); others as they are.
    return ex.span ? inRequestSpan(ex.span, () => answer(ex, path, req, res, work)) : answer(ex, path, req, res, work);
  };

  return { open, finish, answerAhead };
}
