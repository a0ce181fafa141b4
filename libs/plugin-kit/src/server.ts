import { status as Status } from '@grpc/grpc-js';
import { DecodeError, DEFAULT_MAX_JSON_DEPTH, EncodeError, PACKAGES, rpcMethod, serviceOf, type RpcMethod } from '@platform/plugin';
import { fail, PluginFailure } from './errors';
import { listenH2, type H2Call, type H2Route } from './h2-server';

/** What a handler is told besides the request. */
export interface HandlerContext {
  /** Aborted when the caller cancels the call or its deadline passes. */
  signal: AbortSignal;
  /** The caller's deadline, if it set one. */
  deadline?: Date;
  /** The call's gRPC metadata (upstream sends `token`, `x_domain_id`, `traceparent`). */
  metadata: Record<string, string>;
}

export type Awaitable<T> = T | Promise<T>;
export type UnaryHandler<Req, Res> = (request: Req, ctx: HandlerContext) => Awaitable<Res>;
/** A server stream's handler: its messages, pulled as the caller reads (back-pressure). */
export type StreamHandler<Req, Res> = (request: Req, ctx: HandlerContext) => AsyncIterable<Res> | Iterable<Res>;

/** One service of the protocol with the handlers of the methods the plugin implements (the others answer UNIMPLEMENTED). */
export interface ServiceHandlers {
  /** Full name, e.g. spaceone.api.cost_analysis.plugin.Cost. */
  service: string;
  methods: Record<string, UnaryHandler<any, any> | StreamHandler<any, any> | undefined>;
}

export interface ServeOptions {
  /** 0 (the default): any free port; the bound one is in the answer. */
  port?: number;
  /** Default 127.0.0.1; '0.0.0.0' in a container. */
  host?: string;
  /** Serve TLS (grpcs://) with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Largest message received / sent (bytes); default 32 MiB each. */
  maxReceiveBytes?: number;
  maxSendBytes?: number;
  /** Struct nesting accepted in a request (default 64). */
  maxJsonDepth?: number;
  /** What ServerInfo.get_version answers (default 1.0.0). */
  version?: string;
  /** Told of each handler failure that is not a PluginFailure (a bug of the plugin); never given the request. */
  onError?: (err: unknown, method: string) => void;
}

export interface PluginServer {
  port: number;
  /** grpc://host:port or grpcs://host:port, as a supervisor publishes it. */
  endpoint: string;
  /** Health answers NOT_SERVING, calls in flight get `graceMs` to end, then the rest are cut. */
  stop(graceMs?: number): Promise<void>;
  /** Cuts every connection at once, as a crash would. */
  kill(): void;
}

const MiB = 1024 * 1024;

/** A handler's failure as the status python-core would send. */
function statusOf(err: unknown, method: string, onError?: ServeOptions['onError']): { code: Status; details: string } {
  if (err instanceof PluginFailure) return { code: err.status, details: err.details };
  onError?.(err, method);
  return { code: Status.INTERNAL, details: fail.unknown(String((err as Error)?.message ?? err)).details };
}

const contextOf = (call: H2Call): HandlerContext => ({ signal: call.signal, deadline: call.deadline, metadata: call.metadata });

function decodeRequest<Req>(m: RpcMethod<Req>, bytes: Buffer): Req {
  try {
    return m.request.decode(bytes);
  } catch (e) {
    if (e instanceof DecodeError) throw fail.invalidArgument(`The request is not a ${m.request.typeName}: ${e.message}`);
    throw e;
  }
}

function encodeResponse<Res>(m: RpcMethod<unknown, unknown, unknown, Res>, value: Res): Buffer {
  try {
    return m.response.encode(value);
  } catch (e) {
    if (e instanceof EncodeError) throw fail.unknown(`The plugin's answer is not a ${m.response.typeName}: ${e.message}`);
    throw e;
  }
}

function unary(m: RpcMethod, handler: UnaryHandler<unknown, unknown>, o: ServeOptions): H2Route {
  return async (call) => {
    try {
      const answer = encodeResponse(m, (await handler(decodeRequest(m, call.message), contextOf(call))) ?? {});
      call.reply(answer);
    } catch (e) {
      const { code, details } = statusOf(e, m.path, o.onError);
      call.end(code, details);
    }
  };
}

function stream(m: RpcMethod, handler: StreamHandler<unknown, unknown>, o: ServeOptions): H2Route {
  return async (call) => {
    const { signal } = call;
    try {
      const request = decodeRequest(m, call.message);
      for await (const message of handler(request, contextOf(call))) {
        if (signal.aborted) break; // leaving the loop ends the handler's generator (return())
        if (!call.write(encodeResponse(m, message))) await call.drained();
        if (signal.aborted) break;
      }
      call.end(Status.OK);
    } catch (e) {
      if (!signal.aborted) {
        const { code, details } = statusOf(e, m.path, o.onError);
        call.end(code, details);
      }
    }
  };
}

/** The routes of one service's implemented methods, by path. */
function bindService(h: ServiceHandlers, o: ServeOptions, routes: Map<string, H2Route>): void {
  const svc = serviceOf(h.service);
  for (const [name, handler] of Object.entries(h.methods)) {
    if (!handler) continue;
    if (!svc.methods[name]) throw new Error(`${h.service} has no method ${name}`);
    const m = rpcMethod(h.service, name, o.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH);
    routes.set(m.path, m.responseStream ? stream(m, handler as StreamHandler<unknown, unknown>, o) : unary(m, handler as UnaryHandler<unknown, unknown>, o));
  }
}

/**
 * Serves the given services on one port, as an upstream plugin container does, with the gRPC health
 * service (SERVING until stop) and spaceone.api.core.v1.ServerInfo.
 */
export async function servePlugin(services: ServiceHandlers[], o: ServeOptions = {}): Promise<PluginServer> {
  let serving = true;
  const names = new Set(services.map((s) => s.service));
  const all: ServiceHandlers[] = [
    ...services,
    {
      service: `${PACKAGES.health}.Health`,
      methods: {
        Check: ({ service }: { service: string }) => {
          if (service && !names.has(service)) throw fail.custom(Status.NOT_FOUND, 'ERROR_NOT_FOUND', `Unknown service. (service = ${service})`);
          return { status: serving ? 'SERVING' : 'NOT_SERVING' };
        },
      },
    },
    { service: `${PACKAGES.core}.ServerInfo`, methods: { get_version: () => ({ version: o.version ?? '1.0.0' }) } },
  ];
  // A method not implemented (a data source plugin without Metric or Log) has no route: UNIMPLEMENTED.
  const routes = new Map<string, H2Route>();
  for (const s of all) bindService(s, o, routes);
  const host = o.host ?? '127.0.0.1';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const server = await listenH2(
    { tls: o.tls, maxReceiveBytes: o.maxReceiveBytes ?? 32 * MiB, maxSendBytes: o.maxSendBytes ?? 32 * MiB, route: (path) => routes.get(path) },
    host,
    o.port ?? 0,
  );
  return {
    port: server.port,
    endpoint: `${o.tls ? 'grpcs' : 'grpc'}://${hostPart}:${server.port}`,
    stop: (graceMs = 5000) => {
      serving = false;
      return server.stop(graceMs);
    },
    kill: () => {
      serving = false;
      server.kill();
    },
  };
}
