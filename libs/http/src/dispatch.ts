// The operation registry: every operation (and every `post` route) dispatched ahead of Express, and
// each operation's run: token → permission → body (bounds) → proto3 defaults → zod → domain_id → handler.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import { errors } from '@platform/errors';
import { bearerToken, isAllowed, type TokenVerifier } from '@platform/auth';
import type { Operation, RequestContext } from './operation';
import { parseRequest } from './validation';
import { readJsonBody, sendJson } from './body';
import { answerObserver } from './responses';
import { OperationContext, type TrustFn } from './exchange';
import type { Pipeline } from './pipeline';

export type RouteHandler = (req: IncomingMessage, params: Record<string, string>, ctx: Omit<RequestContext, 'auth'>) => Promise<unknown>;
type Wrap = (label: string, fn: (req: express.Request, res: express.Response, ctx: Omit<RequestContext, 'auth'>) => Promise<void>) => express.RequestHandler;
type ExpressHandle = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/** A read operation (list, get, stat, analyze, export, get-*, list-*): served by the read replica when there is one. */
export function isReadOperation(path: string): boolean {
  return /\/(list|get|stat|analyze|export)(-[a-z0-9-]+)?$/.test(path);
}

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

export interface DispatchOptions {
  operations: Operation<any>[];
  verifier?: TokenVerifier;
  onWrite?: (auth: RequestContext['auth']) => Promise<void>;
  /** The body limit in bytes, and as the app was given it (for the error's message). */
  limit: number;
  limitText: string;
  trust: TrustFn;
  pipeline: Pipeline;
  wrap: Wrap;
}

const noAuth = undefined as unknown as RequestContext['auth'];

/**
 * One operation's request: the token and permission (before a byte of the body is read), the body,
 * validation, the domain check, the handler. A token seen before is checked without a promise.
 */
function operationRunner(o: DispatchOptions, isRead: ReadonlySet<string>) {
  return (op: Operation, req: IncomingMessage, res: ServerResponse) =>
    o.pipeline.answerAhead(op.path, op.path, req, res, async (ex) => {
      let auth = noAuth;
      if (op.access !== 'public') {
        const token = bearerToken(req.headers.authorization);
        auth = o.verifier!.authenticateCached(token) ?? (await o.verifier!.authenticate(token));
        if (!isAllowed(auth, op.access)) throw errors.permissionDenied(`Permission denied. (${op.access.permission})`);
        ex.caller = { domain_id: auth.domainId, user_id: auth.userId };
      }
      const body = await readJsonBody(req, o.limit, o.limitText);
      const input = parseRequest(op.schema, body);
      ex.input = input;
      const bodyDomain = (input as { domain_id?: unknown } | undefined)?.domain_id;
      if (auth && bodyDomain !== undefined && bodyDomain !== auth.domainId) {
        throw errors.permissionDenied(`Permission denied. (key = domain_id, reason = ${String(bodyDomain)} is not the domain of the access token)`);
      }
      try {
        const answer = (await op.handler(input, new OperationContext(req, ex, o.trust, auth))) ?? {};
        answerObserver()?.answer(op, 200, answer, input, body);
        return answer;
      } finally {
        if (auth && o.onWrite && !isRead.has(op.path)) await o.onWrite(auth).catch(() => {});
      }
    });
}

/**
 * Registers the operations (all POST on exact paths) and answers them ahead of Express: one lookup in
 * a map, so an operation pays for no router, no prototype swap of its request and answer, and no
 * middleware it does not use. Express keeps the rest (health, metrics, documents, webhooks, 404, and
 * the 405 of another method on an operation's path, registered here). Returns `post`, which adds a
 * parameterized POST route to the same dispatch.
 */
export function dispatchOperations(app: express.Express, o: DispatchOptions): (pattern: string, label: string, fn: RouteHandler) => void {
  const runners = new Map<string, Operation>();
  const isRead = new Set(o.operations.filter((op) => isReadOperation(op.path)).map((op) => op.path));
  for (const op of o.operations) {
    if (runners.has(op.path)) throw new Error(`operation path declared twice: ${op.path}`);
    if (op.access !== 'public' && !o.verifier) throw new Error(`${op.path} needs a token verifier`);
    runners.set(op.path, op);
    app.all(op.path, (_req, _res, next) => next(errors.methodNotAllowed(_req.method)));
  }
  const runOperation = operationRunner(o, isRead);

  /** A `post` route's request: the handler's answer, through answerAhead. */
  const runRoute = (label: string, fn: RouteHandler, params: Record<string, string>, path: string, req: IncomingMessage, res: ServerResponse) =>
    o.pipeline.answerAhead(label, path, req, res, async (ex) => (await fn(req, params, new OperationContext(req, ex, o.trust, noAuth))) ?? {});
  const fastRoutes: { match: (path: string) => Record<string, string> | undefined; label: string; fn: RouteHandler }[] = [];
  const post = (pattern: string, label: string, fn: RouteHandler) => {
    fastRoutes.push({ match: compileRoute(pattern), label, fn });
    app.post(
      pattern,
      o.wrap(label, async (req, res, ctx) => sendJson(res, 200, (await fn(req, { ...req.params } as Record<string, string>, ctx)) ?? {}, ctx.requestId)),
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
  return post;
}
