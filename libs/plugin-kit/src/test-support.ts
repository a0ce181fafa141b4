import { Server, ServerCredentials, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import { createServer } from 'node:net';
import { DEFAULT_PLUGIN_CLIENT_CONFIG, type PluginClientConfig } from '@platform/plugin';

/** The default client configuration with some values changed (short timeouts, small bounds). */
export const clientConfig = (o: Partial<PluginClientConfig> = {}): PluginClientConfig => ({ ...DEFAULT_PLUGIN_CLIENT_CONFIG, ...o });

/** A port nothing listens on (bound, then closed). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const identity = (b: Buffer) => b;

/**
 * A hostile plugin: a raw gRPC server answering `path` with whatever bytes it is given (a unary
 * answer, or a stream of messages), not a message the protocol knows.
 */
export async function rawServer(path: string, answer: { unary?: () => Buffer; stream?: (call: ServerWritableStream<Buffer, Buffer>) => void }) {
  const server = new Server({ 'grpc.max_send_message_length': -1 });
  const name = path.split('/').pop()!;
  server.addService(
    { [name]: { path, requestStream: false, responseStream: Boolean(answer.stream), requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
    {
      [name]: answer.stream
        ? (call: ServerWritableStream<Buffer, Buffer>) => answer.stream!(call)
        : (_call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => cb(null, answer.unary!()),
    } as never,
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { endpoint: `grpc://127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `signal` aborts. */
export const aborted = (signal: AbortSignal) => new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
