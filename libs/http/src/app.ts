// createServiceApp: one module's Express app, put together from its parts: the request pipeline
// (pipeline.ts, exchange.ts), the operation registry and its dispatch (dispatch.ts), the documents
// (docs-routes.ts), health and metrics (health.ts) and error handling (failures.ts).
import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { MODULES, type Logger } from '@platform/core';
import { errors } from '@platform/errors';
import type { TokenVerifier } from '@platform/auth';
import { inRequestSpan } from '@platform/telemetry';
import type { Operation, RequestContext } from './operation';
import { parseBytes, readJsonBody } from './body';
import { pathRedactor } from './redact';
import { answerObserver } from './responses';
import type { CountedQueue } from './metrics';
import { OperationContext, exchangeOf, type TrustFn } from './exchange';
import { errorAnswers } from './failures';
import { requestPipeline } from './pipeline';
import { mountHealth, serviceMetrics } from './health';
import { mountDocs } from './docs-routes';
import { dispatchOperations, type RouteHandler } from './dispatch';

export { isReadOperation, type RouteHandler } from './dispatch';

export interface ServiceAppOptions {
  service: string;
  operations: Operation<any>[];
  logger: Logger;
  /** Verifies access tokens; needed when any operation is not public. */
  verifier?: TokenVerifier;
  /** Each check throws (or rejects) when its dependency is down; /readyz answers 503 then. */
  readiness?: Record<string, () => Promise<unknown>>;
  bodyLimit?: string;
  /** Extra routes (e.g. webhook ingestion), mounted before the 404 fallback. */
  routes?: (app: express.Express, helpers: RouteHelpers) => void;
  /**
   * BullMQ queues (anything with a name and getJobCounts) whose jobs /metrics counts per state at each
   * scrape (`platform_queue_jobs`): the backlog, and the dead letters (`failed`).
   */
  queues?: CountedQueue[];
  /**
   * Paths that carry a secret, as templates (`/monitoring/v1/webhook/*\/:secret`), besides the
   * module's own in config/modules.json: every logged path passes through them (see redact.ts),
   * whatever route the request met.
   */
  secretPaths?: string[];
  /**
   * Told, before the answer is sent, that an authenticated caller's write operation ended (succeeded or
   * not): every operation but a read (isReadOperation). The app's ReadRouter (libs/db) keeps that
   * caller's reads on the primary until the replica has replayed the write. Never fails the request.
   */
  onWrite?: (auth: RequestContext['auth']) => Promise<void>;
}

export interface RouteHelpers {
  /** Runs a handler with the same error envelope, logging and metrics as operations. */
  wrap: (label: string, fn: (req: Request, res: Response, ctx: Omit<RequestContext, 'auth'>) => Promise<void>) => express.RequestHandler;
  /** The request's JSON object body, read under the app's body limit and media type rules (as operations read theirs). */
  readJson: (req: IncomingMessage) => Promise<unknown>;
  /**
   * A POST route with path parameters (`/monitoring/v1/webhook/:webhook_id/:access_key/events`),
   * dispatched ahead of Express as the operations are: `fn` gets the request, the path's parameters and
   * the context, and answers the JSON body of a 200 (a throw is its envelope). The same handler is also
   * mounted on Express, which takes what the exact match leaves (another letter case, a `%`-escape in a
   * segment), so the route answers exactly as an Express route would.
   */
  post: (pattern: string, label: string, fn: RouteHandler) => void;
}

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    log: Logger;
  }
}

const noAuth = undefined as unknown as RequestContext['auth'];
/** The status logged and counted for a request whose caller left before its answer was written (nginx's 499). */
const CALLER_CLOSED = 499;

export function createServiceApp(options: ServiceAppOptions): express.Express {
  const { service, logger } = options;
  const app = express();
  answerObserver()?.app(service, options.operations);
  app.disable('x-powered-by');
  app.set('etag', false);
  // X-Forwarded-For is believed only from the proxies TRUST_PROXY names (default: loopback and
  // private networks, where the gateway and the cluster's ingress live), so a caller cannot choose
  // the address that rate limits and logs see.
  app.set('trust proxy', trustProxySetting(process.env.TRUST_PROXY));
  const trust = app.get('trust proxy fn') as TrustFn;

  const moduleSecrets = (MODULES as Record<string, { secretPaths?: string[] }>)[service]?.secretPaths ?? [];
  const redactPath = pathRedactor([...moduleSecrets, ...(options.secretPaths ?? [])]);
  const { registry, requests } = serviceMetrics(service, options.readiness ?? {}, options.queues ?? []);
  const answerError = errorAnswers(logger, new Map(options.operations.map((op) => [op.path, op])));
  const pipeline = requestPipeline(logger, requests, redactPath, answerError);

  // Every request that Express routes (all but the operations, see dispatch.ts): its exchange,
  // request id and one log line.
  app.use((req, res, next) => {
    const ex = pipeline.open(req, res);
    req.requestId = ex.requestId;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => ex.log,
      set: (v: Logger) => (ex.log = v),
    });
    res.setHeader('x-request-id', ex.requestId);
    // Once, when the answer is written; or when the caller leaves first (a download cut short), which
    // Node reports as 'close' with no 'finish': then status 499 (the caller closed the request), and
    // its span ends too (an open span would also keep the trace context storage on, libs/telemetry).
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      pipeline.finish(ex, req.method, req.path, res.writableFinished ? res.statusCode : CALLER_CLOSED);
    };
    res.on('finish', finish);
    res.on('close', finish);
    if (ex.span) inRequestSpan(ex.span, next);
    else next();
  });

  mountHealth(app, service, options.readiness ?? {}, registry);
  mountDocs(app, service, options.operations);

  const limitText = options.bodyLimit ?? '1mb';
  const limit = parseBytes(limitText);
  const wrap: RouteHelpers['wrap'] = (label, fn) => async (req, res, next) => {
    const ex = exchangeOf(res)!;
    ex.operation = label;
    try {
      await fn(req, res, new OperationContext(req, ex, trust, noAuth));
    } catch (e) {
      next(e);
    }
  };
  const post = dispatchOperations(app, { operations: options.operations, verifier: options.verifier, onWrite: options.onWrite, limit, limitText, trust, pipeline, wrap });

  options.routes?.(app, { wrap, post, readJson: (req) => readJsonBody(req, limit, limitText) });

  app.use((req, _res, next) => next(errors.pathNotFound(req.path)));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    answerError(req, res, exchangeOf(res)!, err);
  });
  return app;
}

/** `TRUST_PROXY`: `true`/`false`, a hop count, or addresses/subnets/names as Express takes them. */
export function trustProxySetting(raw: string | undefined): boolean | number | string {
  const v = (raw ?? '').trim();
  if (!v) return 'loopback, linklocal, uniquelocal';
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^\d+$/.test(v)) return Number(v);
  return v;
}
