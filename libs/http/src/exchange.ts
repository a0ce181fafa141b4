// One request's state while it runs (its Exchange), its id, and the handler's view of it (OperationContext).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { Logger } from '@platform/core';
import type { RequestSpan } from '@platform/telemetry';
import type { RequestContext } from './operation';

/** Express's `trust proxy` function: whether the hop at `address` is a proxy to believe. */
export type TrustFn = (address: string, hop: number) => boolean;

/** What the platform knows of one request while it runs: its id, operation, caller and validated input. */
export class Exchange {
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

/** Keeps a request's exchange on its answer, where the error handler finds it. */
export const attachExchange = (res: ServerResponse, ex: Exchange): void => {
  (res as WithExchange)[EXCHANGE] = ex;
};
export const exchangeOf = (res: ServerResponse): Exchange | undefined => (res as WithExchange)[EXCHANGE];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's id: the caller's (the gateway sets one on every request it forwards) when it is a
 * plausible one, else this process's random prefix (48 bits) and a counter, unique across processes
 * without a random draw and a UUID's formatting on each request (issue #22).
 */
const ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `${ID_PREFIX}-${(++requestCounter).toString(36)}`;
}

/** A handler's view of its request (RequestContext); the client address is worked out only if asked for. */
export class OperationContext implements RequestContext {
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

/** The caller's address as Express's `req.ip` works it out: the socket's peer, or the client a trusted proxy names. */
function clientIpOf(req: IncomingMessage, trust: TrustFn): string {
  return proxyaddr(req, trust) ?? req.socket.remoteAddress ?? '';
}
