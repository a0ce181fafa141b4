import { Metadata, Server, ServerCredentials, status as Status, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData, type UntypedServiceImplementation, type ServiceDefinition } from '@grpc/grpc-js';
import { DecodeError, DEFAULT_MAX_JSON_DEPTH, EncodeError, PACKAGES, rpcMethod, serviceOf, type RpcMethod } from '@platform/plugin';
import { fail, PluginFailure } from './errors';

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
const identity = (b: Buffer) => b;

function metadataOf(m: Metadata): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(m.getMap())) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A handler's failure as the status python-core would send. */
function statusOf(err: unknown, method: string, onError?: ServeOptions['onError']): { code: Status; details: string } {
  if (err instanceof PluginFailure) return { code: err.status, details: err.details };
  onError?.(err, method);
  return { code: Status.INTERNAL, details: fail.unknown(String((err as Error)?.message ?? err)).details };
}

function contextOf(call: ServerUnaryCall<Buffer, Buffer> | ServerWritableStream<Buffer, Buffer>): { ctx: HandlerContext; done: () => void } {
  const ac = new AbortController();
  const onCancel = () => ac.abort(new Error('call cancelled'));
  call.on('cancelled', onCancel);
  const d = call.getDeadline();
  const deadline = d instanceof Date ? d : Number.isFinite(d) ? new Date(d) : undefined;
  let timer: NodeJS.Timeout | undefined;
  if (deadline) {
    timer = setTimeout(() => ac.abort(new Error('deadline exceeded')), Math.max(0, deadline.getTime() - Date.now()));
    timer.unref();
  }
  return {
    ctx: { signal: ac.signal, deadline, metadata: metadataOf(call.metadata) },
    done: () => {
      clearTimeout(timer);
      call.removeListener('cancelled', onCancel);
    },
  };
}

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

function unary(m: RpcMethod, handler: UnaryHandler<unknown, unknown>, o: ServeOptions) {
  return async (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
    const { ctx, done } = contextOf(call);
    try {
      const request = decodeRequest(m, call.request);
      callback(null, encodeResponse(m, (await handler(request, ctx)) ?? {}));
    } catch (e) {
      callback({ ...statusOf(e, m.path, o.onError), metadata: new Metadata() });
    } finally {
      done();
    }
  };
}

/** Waits until the stream can take more, or the call ends. */
function drained(call: ServerWritableStream<Buffer, Buffer>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      call.removeListener('drain', finish);
      call.removeListener('close', finish);
      signal.removeEventListener('abort', finish);
      resolve();
    };
    call.once('drain', finish);
    call.once('close', finish);
    signal.addEventListener('abort', finish, { once: true });
  });
}

function stream(m: RpcMethod, handler: StreamHandler<unknown, unknown>, o: ServeOptions) {
  return async (call: ServerWritableStream<Buffer, Buffer>) => {
    const { ctx, done } = contextOf(call);
    try {
      const request = decodeRequest(m, call.request);
      for await (const message of handler(request, ctx)) {
        if (ctx.signal.aborted) break; // leaving the loop ends the handler's generator (return())
        if (!call.write(encodeResponse(m, message))) await drained(call, ctx.signal);
        if (ctx.signal.aborted) break;
      }
      if (!ctx.signal.aborted) call.end();
    } catch (e) {
      if (!ctx.signal.aborted) call.emit('error', { ...statusOf(e, m.path, o.onError), metadata: new Metadata() });
    } finally {
      done();
    }
  };
}

/** The definition and implementation grpc-js takes for one service, with the implemented methods only. */
function bindService(h: ServiceHandlers, o: ServeOptions): { definition: ServiceDefinition; implementation: UntypedServiceImplementation } {
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: UntypedServiceImplementation = {};
  const svc = serviceOf(h.service);
  for (const [name, handler] of Object.entries(h.methods)) {
    if (!handler) continue;
    if (!svc.methods[name]) throw new Error(`${h.service} has no method ${name}`);
    const m = rpcMethod(h.service, name, o.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH);
    definition[name] = {
      path: m.path,
      requestStream: false,
      responseStream: m.responseStream,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    implementation[name] = (m.responseStream ? stream(m, handler as StreamHandler<unknown, unknown>, o) : unary(m, handler as UnaryHandler<unknown, unknown>, o)) as never;
  }
  return { definition: definition as ServiceDefinition, implementation };
}

/**
 * Serves the given services on one port, as an upstream plugin container does, with the gRPC health
 * service (SERVING until stop) and spaceone.api.core.v1.ServerInfo.
 */
export async function servePlugin(services: ServiceHandlers[], o: ServeOptions = {}): Promise<PluginServer> {
  const server = new Server({
    'grpc.max_receive_message_length': o.maxReceiveBytes ?? 32 * MiB,
    'grpc.max_send_message_length': o.maxSendBytes ?? 32 * MiB,
  });
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
  for (const s of all) {
    const { definition, implementation } = bindService(s, o);
    // A service none of whose methods is implemented (a data source plugin without Metric or Log) is
    // not served: grpc-js refuses an empty service, and its calls answer UNIMPLEMENTED anyway.
    if (Object.keys(definition).length) server.addService(definition, implementation);
  }
  const host = o.host ?? '127.0.0.1';
  const creds = o.tls ? ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(o.tls.cert), private_key: Buffer.from(o.tls.key) }]) : ServerCredentials.createInsecure();
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(`${hostPart}:${o.port ?? 0}`, creds, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    port,
    endpoint: `${o.tls ? 'grpcs' : 'grpc'}://${hostPart}:${port}`,
    stop: (graceMs = 5000) => {
      serving = false;
      return new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
    kill: () => {
      serving = false;
      server.forceShutdown();
    },
  };
}
