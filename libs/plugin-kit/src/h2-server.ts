import { GRPC, grpcFrame, parseGrpcTimeout, percentEncode } from '@platform/plugin';
import { constants, createSecureServer, createServer, type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';

/**
 * gRPC's server side on node:http2 directly (docs/decisions/plugins.md, "The kit serves on node:http2"):
 * one stream per call, the request read whole (one 5-byte-prefixed message, bounded), the answer as
 * headers, messages and trailers (grpc-status, percent-encoded grpc-message), or trailers-only for a
 * failure before any message. Deadlines come from grpc-timeout; a RST_STREAM or a closed connection
 * aborts the call. grpc-js' server machinery (interceptors, a call object, Metadata and a status per call)
 * was most of a kit plugin's CPU per unary call.
 */

/** A call as a route sees it: its request bytes and the means to answer. */
export interface H2Call {
  path: string;
  message: Buffer;
  /** Aborted on a cancel (RST_STREAM, the connection's end) or at the deadline. */
  signal: AbortSignal;
  deadline?: Date;
  metadata: Record<string, string>;
  /** Sends one message (headers first when none were sent); false: wait for `drained()`. */
  write(message: Buffer): boolean;
  /** Resolves when the stream can take more, or the call ended. */
  drained(): Promise<void>;
  /** A unary call's answer: headers, its one message and the OK trailers, in one write. */
  reply(message: Buffer): void;
  /** Ends the call with this status (trailers-only if no message was sent); later calls are ignored. */
  end(code: number, details?: string): void;
}

export type H2Route = (call: H2Call) => void;

export interface H2ServerOptions {
  tls?: { cert: string | Buffer; key: string | Buffer };
  maxReceiveBytes: number;
  maxSendBytes: number;
  /** The route of a path, or undefined (UNIMPLEMENTED). */
  route(path: string): H2Route | undefined;
}

/** Headers that are gRPC's transport, not the call's metadata (as grpc-js' server drops them). */
const TRANSPORT = new Set(['content-type', 'te', 'grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'accept-encoding']);

function metadataOf(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const k in h) {
    const v = h[k];
    if (k.charCodeAt(0) === 58 /* ':' */ || TRANSPORT.has(k) || k.endsWith('-bin') || typeof v !== 'string') continue;
    out[k] = v;
  }
  return out;
}

const RESPONSE_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };
const OK_TRAILERS = { 'grpc-status': '0', 'grpc-message': '' };

function trailersOnly(stream: ServerHttp2Stream, code: number, details: string): void {
  if (stream.headersSent || stream.destroyed) return;
  stream.respond({ ...RESPONSE_HEADERS, 'grpc-status': String(code), 'grpc-message': percentEncode(details) }, { endStream: true });
}

/** Serves one stream: validates it, reads the request, hands the call to its route. */
function onStream(o: H2ServerOptions, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  stream.on('error', () => {}); // a reset or a failed connection; the call learns it from 'close'
  const ct = headers['content-type'];
  if (headers[':method'] !== 'POST' || typeof ct !== 'string' || !ct.startsWith('application/grpc')) {
    stream.respond({ ':status': 415, 'grpc-status': String(GRPC.UNKNOWN), 'grpc-message': 'not a gRPC request' }, { endStream: true });
    return;
  }
  const path = String(headers[':path']);
  const route = o.route(path);
  if (!route) return void closeAfter(stream, GRPC.UNIMPLEMENTED, `The server does not implement the method ${path}`);
  const enc = headers['grpc-encoding'];
  if (typeof enc === 'string' && enc !== 'identity') return void closeAfter(stream, GRPC.UNIMPLEMENTED, `Compression ${enc} is not supported`);

  const ac = new AbortController();
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = parseGrpcTimeout(headers['grpc-timeout']);
  const deadline = timeout === undefined ? undefined : new Date(Date.now() + timeout);
  let trailers: Record<string, string> | undefined;

  const end = (code: number, details = '') => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    if (stream.destroyed || stream.closed) return;
    if (!stream.headersSent) return closeAfter(stream, code, details);
    trailers = { 'grpc-status': String(code), 'grpc-message': percentEncode(details) };
    stream.end();
  };
  stream.on('wantTrailers', () => stream.sendTrailers(trailers ?? { 'grpc-status': String(GRPC.INTERNAL), 'grpc-message': 'the call ended without a status' }));
  stream.on('close', () => {
    if (!ended) {
      ended = true;
      clearTimeout(timer);
      ac.abort(new Error('call cancelled'));
    }
  });
  if (timeout !== undefined) {
    timer = setTimeout(() => {
      ac.abort(new Error('deadline exceeded'));
      end(GRPC.DEADLINE_EXCEEDED, 'Deadline exceeded');
    }, timeout);
    timer.unref();
  }

  // The request: one message, bounded by maxReceiveBytes.
  let body: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  let declared = -1;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (declared < 0 && size >= 5) declared = (body ? Buffer.concat([body, chunk]) : chunks ? Buffer.concat([...chunks, chunk]) : chunk).readUInt32BE(1);
    if (declared > o.maxReceiveBytes || size - 5 > o.maxReceiveBytes) {
      stream.removeListener('data', onData);
      return end(GRPC.RESOURCE_EXHAUSTED, `Received message larger than max (${Math.max(declared, size - 5)} vs. ${o.maxReceiveBytes})`);
    }
    if (body === undefined && chunks === undefined) body = chunk;
    else {
      chunks ??= [body!];
      body = undefined;
      chunks.push(chunk);
    }
  };
  stream.on('data', onData);
  stream.once('end', () => {
    if (ended) return;
    const all = body ?? (chunks ? Buffer.concat(chunks) : Buffer.alloc(0));
    if (all.length < 5) return end(GRPC.INTERNAL, 'The request has no message');
    if (all[0] !== 0) return end(GRPC.UNIMPLEMENTED, 'Compressed requests are not supported');
    const len = all.readUInt32BE(1);
    if (all.length !== 5 + len) return end(GRPC.INTERNAL, all.length < 5 + len ? 'The request ended inside its message' : 'A unary call carries one message');
    route({
      path,
      message: all.subarray(5),
      signal: ac.signal,
      deadline,
      metadata: metadataOf(headers),
      write: (message) => {
        if (ended || stream.destroyed) return true;
        if (message.length > o.maxSendBytes) {
          end(GRPC.RESOURCE_EXHAUSTED, `Sent message larger than max (${message.length} vs. ${o.maxSendBytes})`);
          return true;
        }
        if (!stream.headersSent) stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
        return stream.write(grpcFrame(message));
      },
      reply: (message) => {
        if (ended || stream.destroyed) return;
        if (message.length > o.maxSendBytes) return end(GRPC.RESOURCE_EXHAUSTED, `Sent message larger than max (${message.length} vs. ${o.maxSendBytes})`);
        ended = true;
        clearTimeout(timer);
        trailers = OK_TRAILERS;
        stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
        stream.end(grpcFrame(message));
      },
      drained: () =>
        new Promise<void>((resolve) => {
          if (ended || stream.destroyed) return resolve();
          const done = () => {
            stream.removeListener('drain', done);
            stream.removeListener('close', done);
            resolve();
          };
          stream.once('drain', done);
          stream.once('close', done);
        }),
      end,
    });
  });
}

/** A trailers-only answer, then the stream is closed (the caller may still be sending). */
function closeAfter(stream: ServerHttp2Stream, code: number, details: string): void {
  trailersOnly(stream, code, details);
  if (!stream.destroyed && !stream.closed) stream.close(constants.NGHTTP2_NO_ERROR);
}

export interface H2Server {
  port: number;
  /** No new connection; sessions get a GOAWAY and `graceMs` for their calls, then are destroyed. */
  stop(graceMs: number): Promise<void>;
  kill(): void;
}

export async function listenH2(o: H2ServerOptions, host: string, port: number): Promise<H2Server> {
  const settings = { maxConcurrentStreams: 1000 };
  const server: Http2Server = o.tls
    ? (createSecureServer({ cert: o.tls.cert, key: o.tls.key, allowHTTP1: false, settings, maxSessionMemory: 64 }) as unknown as Http2Server)
    : createServer({ settings, maxSessionMemory: 64 });
  const sessions = new Set<Http2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => {});
    s.setTimeout(0);
  });
  server.on('sessionError', () => {});
  server.on('stream', (stream, headers) => onStream(o, stream, headers));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', () => {});
  const kill = () => {
    server.close();
    for (const s of sessions) s.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    kill,
    stop: (graceMs) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(kill, graceMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        for (const s of sessions) s.close();
      }),
  };
}
