import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import proxyaddr from 'proxy-addr';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { MODULES, repeatFilter, requestLineWriter, type Logger } from '@platform/core';
import { ApiError, errors, isApiError } from '@platform/errors';
import { bearerToken, isAllowed, type TokenVerifier } from '@platform/auth';
import { endRequestSpan, inRequestSpan, startRequestSpan, tracingEnabled, type RequestSpan } from '@platform/telemetry';
import type { Operation, RequestContext } from './operation';
import { parseRequest } from './validation';
import { buildOpenApi } from './openapi';
import { DOCS_CSP, docsAsset, moduleDocsPage, platformDocsPage } from './docs';
import { dependencyFault, sqlState } from './faults';
import { lingerAfterAnswer, parseBytes, readJsonBody, sendJson } from './body';
import { pathRedactor } from './redact';
import { answerObserver } from './responses';
import { RequestMetrics } from './request-metrics';
import { registerProcessMetrics, registerQueueMetrics, type CountedQueue } from './metrics';

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

/** A read operation (list, get, stat, analyze, export, get-*, list-*): served by the read replica when there is one. */
export function isReadOperation(path: string): boolean {
  return /\/(list|get|stat|analyze|export)(-[a-z0-9-]+)?$/.test(path);
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

export type RouteHandler = (req: IncomingMessage, params: Record<string, string>, ctx: Omit<RequestContext, 'auth'>) => Promise<unknown>;

/** A `post` route's pattern as literal segments and `:name` parameters; `match` answers the parameters of an exact match. */
function compileRoute(pattern: string) {
  const segments = pattern.split('/');
  return (path: string): Record<string, string> | undefined => {
    const parts = path.split('/');
    if (parts.length !== segments.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const part = parts[i];
      if (seg.startsWith(':')) {
        // An escaped or empty segment is left to Express (it decodes, and refuses a malformed escape).
        if (!part || part.includes('%')) return undefined;
        params[seg.slice(1)] = part;
      } else if (seg !== part) return undefined;
    }
    return params;
  };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const READY_TIMEOUT_MS = 2000;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    log: Logger;
  }
}

/** What the platform knows of one request while it runs: its id, operation, caller and validated input. */
class Exchange {
  operation: string | undefined = undefined;
  caller: { domain_id: string; user_id: string } | undefined = undefined;
  input: unknown = undefined;
  /** The request's server span, while tracing is on and the request is sampled (libs/telemetry). */
  span: RequestSpan | undefined = undefined;
  private child: Logger | undefined = undefined;
  constructor(
    readonly requestId: string,
    private readonly root: Logger,
    readonly start: number,
  ) {}

  /** The request's logger, made on first use: most requests log only their one line at the end. */
  get log(): Logger {
    return (this.child ??= this.root.child(this.caller ? { req_id: this.requestId, ...this.caller } : { req_id: this.requestId }));
  }
  set log(v: Logger) {
    this.child = v;
  }
}

const EXCHANGE = Symbol('platform.exchange');
type WithExchange = { [EXCHANGE]?: Exchange };
const exchangeOf = (res: ServerResponse): Exchange | undefined => (res as WithExchange)[EXCHANGE];

/**
 * A request's id: the caller's (the gateway sets one on every request it forwards) when it is a
 * plausible one, else this process's random prefix (48 bits) and a counter, unique across processes
 * without a random draw and a UUID's formatting on each request (issue #22).
 */
const ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `${ID_PREFIX}-${(++requestCounter).toString(36)}`;
}

/** A handler's view of its request (RequestContext); the client address is worked out only if asked for. */
class OperationContext implements RequestContext {
  constructor(
    private readonly req: IncomingMessage,
    private readonly exchange: Exchange,
    private readonly trust: TrustFn,
    readonly auth: RequestContext['auth'],
  ) {}
  get requestId() {
    return this.exchange.requestId;
  }
  get clientIp() {
    return clientIpOf(this.req, this.trust);
  }
  get logger() {
    return this.exchange.log;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** Errors from libraries that are the caller's fault, as envelopes; anything else is a 500. */
function toApiError(err: unknown): ApiError | undefined {
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
  // PostgreSQL refusing a character of a value (NUL in a path parameter, say): the value's fault.
  // PostgreSQL refusing a value (class 22: a character it cannot store, a number out of its type's
  // range, NUL in a path parameter): the value's fault, answered without PostgreSQL's message.
  const state = sqlState(err);
  if (state?.startsWith('22')) return errors.invalidArgument('A value is not valid for its field (out of range, or a character that cannot be stored).');
  // Unique violations (pg 23505 or Prisma P2002) that a service did not anticipate.
  if (e?.code === '23505' || e?.code === 'P2002') return errors.conflict('ERROR_ALREADY_EXISTS', 'Resource already exists.');
  if (e?.code === 'P2025') return new ApiError(404, 'ERROR_NOT_FOUND', 'Resource not found.');
  return undefined;
}

export function createServiceApp(options: ServiceAppOptions): express.Express {
  const { service, logger } = options;
  const app = express();
  const byPath = new Map(options.operations.map((op) => [op.path, op]));
  answerObserver()?.app(service, options.operations);
  app.disable('x-powered-by');
  app.set('etag', false);
  // X-Forwarded-For is believed only from the proxies TRUST_PROXY names (default: loopback and
  // private networks, where the gateway and the cluster's ingress live), so a caller cannot choose
  // the address that rate limits and logs see.
  app.set('trust proxy', trustProxySetting(process.env.TRUST_PROXY));

  const moduleSecrets = (MODULES as Record<string, { secretPaths?: string[] }>)[service]?.secretPaths ?? [];
  const unavailableLog = repeatFilter();
  const redactPath = pathRedactor([...moduleSecrets, ...(options.secretPaths ?? [])]);
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requestMetrics = new RequestMetrics(registry);

  // Scraped, never on a request's path: each readiness check (1 up, 0 down) and each queue's jobs by state.
  const readiness = Object.entries(options.readiness ?? {});
  new Gauge({
    name: 'platform_ready',
    help: 'Readiness of each dependency as /readyz checks it (1 ok, 0 unavailable)',
    labelNames: ['check'],
    registers: [registry],
    async collect() {
      const results = await Promise.all(readiness.map(([, check]) => withTimeout(check(), READY_TIMEOUT_MS).then(() => 1, () => 0)));
      readiness.forEach(([name], i) => this.set({ check: name }, results[i]));
    },
  });
  registerQueueMetrics(registry, options.queues ?? []);
  registerProcessMetrics(registry);

  const trust = app.get('trust proxy fn') as TrustFn;
  // The one line per request: its fields are ours (ids, method, the redacted path, status, duration),
  // never a caller's value, so it is put together without the redaction pass every other line pays.
  const writeRequestLine = requestLineWriter(logger);

  /** Metrics and the request's log line, once its answer is written. */
  const finish = (ex: Exchange, method: string | undefined, rawPath: string, statusCode: number) => {
    // Runs outside the request's try/catch: a throw here would be an uncaught exception.
    try {
      const ms = performance.now() - ex.start;
      requestMetrics.observe(ex.operation ?? 'other', statusCode, ms / 1000);
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

  /** A request's exchange, made as it arrives and kept on its answer (where the error handler finds it). */
  const tracing = tracingEnabled();
  const openExchange = (req: IncomingMessage, res: ServerResponse) => {
    const ex = new Exchange(requestIdOf(req), logger, performance.now());
    (res as WithExchange)[EXCHANGE] = ex;
    if (tracing) {
      // The span holds the path as the log line does: secret segments replaced, no query string.
      const q = (req.url ?? '').indexOf('?');
      ex.span = startRequestSpan(req, req.method ?? 'GET', redactPath(q < 0 ? (req.url ?? '') : (req.url ?? '').slice(0, q)));
    }
    return ex;
  };

  /** Every failure's answer: its envelope, logged when it is the platform's fault. */
  const sendError = (req: IncomingMessage, res: ServerResponse, ex: Exchange, err: unknown) => {
    let apiError = toApiError(err);
    // A body not read (refused before it was: no token, too large, another media type) is not parsed:
    // the connection closes after the answer, once what is still coming was dropped (bounded).
    if (!req.complete && !res.headersSent) lingerAfterAnswer(req, res);
    const retryAfter = apiError?.details?.retryAfterSeconds;
    if (typeof retryAfter === 'number' && !res.headersSent) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfter))));
    if (!apiError) {
      ex.log.error({ err, req_id: ex.requestId }, 'unexpected error');
      apiError = errors.unknown();
    } else if (apiError.code === 'ERROR_SERVICE_UNAVAILABLE') {
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
    if (apiError.status === 405) res.setHeader('Allow', 'POST');
    const op = ex.operation === undefined ? undefined : byPath.get(ex.operation);
    if (op && !res.headersSent) answerObserver()?.answer(op, apiError.status, apiError.toEnvelope(), ex.input);
    if (!res.headersSent) sendJson(res, apiError.status, apiError.toEnvelope(), ex.requestId);
  };

  /** sendError, for a request whose socket may be gone: an answer that cannot be written ends it. */
  const answerError = (req: IncomingMessage, res: ServerResponse, ex: Exchange, err: unknown) => {
    try {
      sendError(req, res, ex, err);
    } catch {
      // the answer could not be written (the socket is gone): nothing to tell anyone
      if (!res.headersSent) res.destroy();
    }
  };

  // Every request that Express routes (all but the operations, see the dispatch below): its exchange,
  // request id and one log line.
  app.use((req, res, next) => {
    const ex = openExchange(req, res);
    req.requestId = ex.requestId;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => ex.log,
      set: (v: Logger) => (ex.log = v),
    });
    res.setHeader('x-request-id', ex.requestId);
    res.on('finish', () => finish(ex, req.method, req.path, res.statusCode));
    if (ex.span) inRequestSpan(ex.span, next);
    else next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service });
  });
  // `/readyz?only=redis,queue`: only the named checks (a deployment whose traffic needs only those, as
  // monitoring's webhook URL while PostgreSQL is down: docs/decisions/monitoring.md). An unknown name is 400.
  app.get('/readyz', async (req, res) => {
    const checks: Record<string, string> = {};
    let ok = true;
    const all = Object.entries(options.readiness ?? {});
    const only = typeof req.query.only === 'string' ? req.query.only.split(',').filter(Boolean) : undefined;
    const unknown = only?.find((n) => !all.some(([name]) => name === n));
    if (unknown !== undefined || (req.query.only !== undefined && typeof req.query.only !== 'string')) {
      const e = errors.invalidParameter('only', `readiness checks are ${all.map(([n]) => n).join(', ') || 'none'}`);
      res.status(400).json(e.toEnvelope());
      return;
    }
    await Promise.all(
      all.filter(([name]) => !only || only.includes(name)).map(async ([name, check]) => {
        try {
          await withTimeout(check(), READY_TIMEOUT_MS);
          checks[name] = 'ok';
        } catch (e) {
          ok = false;
          checks[name] = 'unavailable';
          req.log.warn({ check: name, err: (e as Error).message }, 'readiness check failed');
        }
      }),
    );
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', service, checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });

  // OpenAPI 3.1 from the operation table, and a browsable page, under the module's own prefix.
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  const doc = () => (openapi ??= buildOpenApi(service, options.operations));
  app.get(`/${service}/openapi.json`, (_req, res) => {
    res.json(doc());
  });
  // The interactive reference (Swagger UI from node_modules, docs.ts): this module's page, its assets,
  // and the platform's page of every module at /docs (the gateways send /docs to identity).
  const moduleNames = Object.keys(MODULES);
  let modulePage: string | undefined;
  let platformPage: string | undefined;
  const sendPage = (res: Response, html: string) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(html);
  };
  app.get(`/${service}/docs`, (_req, res) => {
    sendPage(res, (modulePage ??= moduleDocsPage(service, moduleNames)));
  });
  app.get('/docs', (_req, res) => {
    sendPage(res, (platformPage ??= platformDocsPage(service, moduleNames)));
  });
  app.get(`/${service}/docs/assets/:file`, (req, res, next) => {
    const asset = docsAsset(req.params.file);
    if (!asset) return next();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type(asset.type).send(asset.body);
  });

  const limitText = options.bodyLimit ?? '1mb';
  const limit = parseBytes(limitText);
  const noAuth = undefined as unknown as RequestContext['auth'];
  const wrap: RouteHelpers['wrap'] = (label, fn) => async (req, res, next) => {
    const ex = exchangeOf(res)!;
    ex.operation = label;
    try {
      await fn(req, res, new OperationContext(req, ex, trust, noAuth));
    } catch (e) {
      next(e);
    }
  };

  /**
   * A request answered ahead of Express (an operation, a `post` route): its exchange, `work`'s answer
   * as a 200 (`{}` for none) or its throw as the envelope, then the request line and metrics.
   */
  const answerAhead = (label: string, path: string, req: IncomingMessage, res: ServerResponse, work: (ex: Exchange) => Promise<unknown>) => {
    const ex = openExchange(req, res);
    ex.operation = label;
    // A sampled request runs with its span active (its statements and jobs under it); others as they are.
    return ex.span ? inRequestSpan(ex.span, () => answer(ex, path, req, res, work)) : answer(ex, path, req, res, work);
  };
  const answer = async (ex: Exchange, path: string, req: IncomingMessage, res: ServerResponse, work: (ex: Exchange) => Promise<unknown>) => {
    try {
      sendJson(res, 200, await work(ex), ex.requestId);
    } catch (e) {
      answerError(req, res, ex, e);
    }
    finish(ex, req.method, path, res.statusCode);
  };

  /**
   * One operation's request: the token and permission (before a byte of the body is read), the body,
   * validation, the domain check, the handler. A token seen before is checked without a promise.
   */
  const runOperation = (op: Operation, req: IncomingMessage, res: ServerResponse) =>
    answerAhead(op.path, op.path, req, res, async (ex) => {
      let auth = undefined as unknown as RequestContext['auth'];
      if (op.access !== 'public') {
        const token = bearerToken(req.headers.authorization);
        auth = options.verifier!.authenticateCached(token) ?? (await options.verifier!.authenticate(token));
        if (!isAllowed(auth, op.access)) throw errors.permissionDenied(`Permission denied. (${op.access.permission})`);
        ex.caller = { domain_id: auth.domainId, user_id: auth.userId };
      }
      const body = await readJsonBody(req, limit, limitText);
      const input = parseRequest(op.schema, body);
      ex.input = input;
      const bodyDomain = (input as { domain_id?: unknown } | undefined)?.domain_id;
      if (auth && bodyDomain !== undefined && bodyDomain !== auth.domainId) {
        throw errors.permissionDenied(`Permission denied. (key = domain_id, reason = ${String(bodyDomain)} is not the domain of the access token)`);
      }
      try {
        const answer = (await op.handler(input, new OperationContext(req, ex, trust, auth))) ?? {};
        answerObserver()?.answer(op, 200, answer, input, body);
        return answer;
      } finally {
        if (auth && options.onWrite && !isRead.has(op.path)) await options.onWrite(auth).catch(() => {});
      }
    });

  // Operations are all POST on exact paths: one lookup in a map dispatches them ahead of Express, which
  // keeps the rest (health, metrics, documents, webhooks, 404 and 405): an operation pays for no router,
  // no prototype swap of its request and answer, and no middleware it does not use.
  const runners = new Map<string, Operation>();
  const isRead = new Set(options.operations.filter((op) => isReadOperation(op.path)).map((op) => op.path));
  for (const op of options.operations) {
    if (runners.has(op.path)) throw new Error(`operation path declared twice: ${op.path}`);
    if (op.access !== 'public' && !options.verifier) throw new Error(`${op.path} needs a token verifier`);
    runners.set(op.path, op);
    app.all(op.path, (_req, _res, next) => next(errors.methodNotAllowed(_req.method)));
  }
  /** A `post` route's request: the handler's answer, through answerAhead. */
  const runRoute = (label: string, fn: RouteHandler, params: Record<string, string>, path: string, req: IncomingMessage, res: ServerResponse) =>
    answerAhead(label, path, req, res, async (ex) => (await fn(req, params, new OperationContext(req, ex, trust, noAuth))) ?? {});
  const fastRoutes: { match: (path: string) => Record<string, string> | undefined; label: string; fn: RouteHandler }[] = [];
  const post: RouteHelpers['post'] = (pattern, label, fn) => {
    fastRoutes.push({ match: compileRoute(pattern), label, fn });
    app.post(
      pattern,
      wrap(label, async (req, res, ctx) => sendJson(res, 200, (await fn(req, { ...req.params } as Record<string, string>, ctx)) ?? {}, ctx.requestId)),
    );
  };

  const expressHandle = (app as unknown as { handle: ExpressHandle }).handle.bind(app);
  (app as unknown as { handle: ExpressHandle }).handle = (req, res, callback) => {
    if (req.method === 'POST') {
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const op = runners.get(path);
      if (op) return void runOperation(op, req, res);
      for (const r of fastRoutes) {
        const params = r.match(path);
        if (params) return void runRoute(r.label, r.fn, params, path, req, res);
      }
    }
    return expressHandle(req, res, callback);
  };

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

type TrustFn = (address: string, hop: number) => boolean;
type ExpressHandle = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/** The caller's address as Express's `req.ip` works it out: the socket's peer, or the client a trusted proxy names. */
function clientIpOf(req: IncomingMessage, trust: TrustFn): string {
  return proxyaddr(req, trust) ?? req.socket.remoteAddress ?? '';
}
