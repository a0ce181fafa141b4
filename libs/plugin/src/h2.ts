import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { PluginEndpoint } from './endpoint';
import { GRPC, grpcFrame, grpcTimeout, percentDecode } from './grpc-wire';

/**
 * Unary gRPC calls on node:http2 directly (docs/decisions/plugins.md, "Unary calls on node:http2"):
 * one HTTP/2 session per endpoint, one stream per call with gRPC's wire format (a 5-byte prefix per
 * message: compressed flag and big-endian length; `content-type: application/grpc`, `te: trailers`,
 * `grpc-timeout`; the status in the trailers, or in the headers of a trailers-only answer, or from the
 * HTTP status when the answer is not gRPC). grpc-js' per-call machinery (call stack, filters, Metadata,
 * a status object per call) was most of a plugin call's cost; this is a stream, a headers object, a
 * promise and a timer. Server streams stay on grpc-js (channels.ts).
 */

/** A call's non-OK status: `code` (a gRPC status number) and `details`, as grpc-js' ServiceError has them. */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(details);
  }
}

/** gRPC's mapping of an HTTP status that came without a grpc-status (doc/http-grpc-status-mapping.md). */
function statusOfHttp(http: number): number {
  if (http === 400) return GRPC.INTERNAL;
  if (http === 401) return GRPC.UNAUTHENTICATED;
  if (http === 403) return GRPC.PERMISSION_DENIED;
  if (http === 404) return GRPC.UNIMPLEMENTED;
  if (http === 429 || http === 502 || http === 503 || http === 504) return GRPC.UNAVAILABLE;
  return GRPC.UNKNOWN;
}

/** gRPC's mapping of a RST_STREAM code (the plugin reset the stream without a status). */
function statusOfReset(code: number): number {
  if (code === constants.NGHTTP2_REFUSED_STREAM) return GRPC.UNAVAILABLE;
  if (code === constants.NGHTTP2_CANCEL) return GRPC.CANCELLED;
  if (code === constants.NGHTTP2_ENHANCE_YOUR_CALM) return GRPC.RESOURCE_EXHAUSTED;
  if (code === constants.NGHTTP2_INADEQUATE_SECURITY) return GRPC.PERMISSION_DENIED;
  return GRPC.INTERNAL;
}

export interface H2Options {
  /** CA certificates a grpcs:// plugin's certificate is checked against (default: Node's). */
  tlsCa?: Buffer;
}

/**
 * One HTTP/2 session to an endpoint, opened at the first call and again after it failed: a GOAWAY,
 * an error or a close of the connection makes the next call open a new one (calls on the old one end
 * UNAVAILABLE, unless the plugin finishes them as a graceful GOAWAY allows).
 */
export class H2Channel {
  private session: ClientHttp2Session | undefined;
  private closed = false;

  constructor(
    private readonly endpoint: PluginEndpoint,
    private readonly options: H2Options = {},
  ) {}

  /** A usable session, opened now if there is none. */
  current(): ClientHttp2Session {
    if (this.closed) throw new GrpcStatusError(GRPC.UNAVAILABLE, 'the channel is closed');
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return s;
    return (this.session = this.open());
  }

  /** Drops the session (new calls open another); calls in flight on it may still end. */
  reset(): void {
    const s = this.session;
    this.session = undefined;
    if (s && !s.closed && !s.destroyed) s.close();
  }

  /** Closes the session once its calls end; no call may start after this. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  /** Ends the session at once: calls in flight fail UNAVAILABLE. */
  destroy(): void {
    this.closed = true;
    const s = this.session;
    this.session = undefined;
    s?.destroy();
  }

  private open(): ClientHttp2Session {
    const { endpoint } = this;
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    const s = endpoint.tls
      ? connect(`https://${host}:${endpoint.port}`, { ca: this.options.tlsCa, servername: isIp(endpoint.host) ? undefined : endpoint.host, maxSessionMemory: 64 })
      : connect(`http://${host}:${endpoint.port}`, { maxSessionMemory: 64 });
    const forget = () => {
      if (this.session === s) this.session = undefined;
    };
    // A failure of the connection fails its streams (each learns it from its own 'close'); the
    // session's own 'error' must be heard or the process would crash.
    s.on('error', forget);
    s.on('goaway', forget);
    s.on('close', forget);
    s.unref(); // an idle plugin session never keeps the process alive; a stream in flight refs it
    s.setTimeout(0);
    return s;
  }
}

const isIp = (host: string) => /^[\d.]+$/.test(host) || host.includes(':');

/** What a unary call needs besides its channel. */
export interface UnaryRequest {
  path: string;
  /** The encoded request message (without the 5-byte prefix). */
  message: Buffer;
  /** Absolute deadline (Date.now() ms). */
  deadline: number;
  maxReceiveBytes: number;
  signal?: AbortSignal;
}

const EMPTY = Buffer.alloc(0);
/**
 * A request's options with HTTP/2's default priority spelled out (the values Node would fill in): Node
 * copies them per request and otherwise adds weight, parent, exclusive and silent to each copy.
 */
const REQUEST_OPTIONS = Object.freeze({ endStream: false, weight: constants.NGHTTP2_DEFAULT_WEIGHT, parent: 0, exclusive: false, silent: false });

/**
 * One unary call: resolves with the answer's message bytes, rejects with a GrpcStatusError (the
 * plugin's status, DEADLINE_EXCEEDED at the deadline, RESOURCE_EXHAUSTED for an answer past
 * `maxReceiveBytes`, UNAVAILABLE when the connection failed), or with the signal's reason when the
 * caller aborts (the stream is then reset with CANCEL, which the plugin sees as a cancelled call).
 */
export function h2Unary(channel: H2Channel, req: UnaryRequest): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const remaining = req.deadline - Date.now();
    if (remaining <= 0) return reject(new GrpcStatusError(GRPC.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    let session: ClientHttp2Session;
    let stream: ClientHttp2Stream;
    try {
      session = channel.current();
      const headers: OutgoingHttpHeaders = {
        ':method': 'POST',
        ':path': req.path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': grpcTimeout(remaining),
      };
      stream = session.request(headers, REQUEST_OPTIONS);
    } catch (e) {
      return reject(new GrpcStatusError(GRPC.UNAVAILABLE, `cannot start the call: ${(e as Error)?.message ?? e}`));
    }
    const frame = grpcFrame(req.message);

    let settled = false;
    let httpStatus = 0;
    let grpcType = false;
    let headerStatus: IncomingHttpHeaders | undefined;
    let trailerStatus: IncomingHttpHeaders | undefined;
    // The answer: one message, gathered from its chunks.
    let pending: Buffer = EMPTY;
    let message: Buffer | undefined;
    let messages = 0;
    const timer = setTimeout(() => fail(new GrpcStatusError(GRPC.DEADLINE_EXCEEDED, 'Deadline exceeded')), remaining);
    const onAbort = () => fail(req.signal!.reason instanceof Error ? req.signal!.reason : new Error('plugin call aborted'));
    req.signal?.addEventListener('abort', onAbort, { once: true });

    function finish() {
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
    /** Ends the call with `e`, resetting the stream (CANCEL) if it is still open. */
    function fail(e: Error) {
      if (settled) return;
      finish();
      if (!stream.closed && !stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
      reject(e);
    }

    stream.on('response', (h) => {
      httpStatus = Number(h[':status']);
      const ct = h['content-type'];
      grpcType = typeof ct === 'string' && ct.startsWith('application/grpc');
      if (h['grpc-status'] !== undefined) headerStatus = h; // trailers-only
    });
    stream.on('trailers', (t) => {
      trailerStatus = t;
    });
    stream.on('data', (chunk: Buffer) => {
      if (settled || !grpcType || httpStatus !== 200) return; // not gRPC: its status says what it is (at 'close')
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 5) {
        const size = pending.readUInt32BE(1);
        if (pending[0] !== 0) return fail(new GrpcStatusError(GRPC.INTERNAL, 'the plugin sent a compressed message, which was not asked for'));
        if (size > req.maxReceiveBytes) return fail(new GrpcStatusError(GRPC.RESOURCE_EXHAUSTED, `Received message larger than max (${size} vs. ${req.maxReceiveBytes})`));
        if (pending.length < 5 + size) break;
        message = pending.subarray(5, 5 + size);
        pending = pending.subarray(5 + size);
        if (++messages > 1) return fail(new GrpcStatusError(GRPC.INTERNAL, 'the plugin sent more than one message for a unary call'));
      }
    });
    stream.on('error', () => {}); // its outcome is read at 'close'
    stream.on('close', () => {
      if (settled) return;
      finish();
      const st = trailerStatus ?? headerStatus;
      if (st) {
        const code = Number(st['grpc-status']);
        if (!Number.isInteger(code) || code < 0 || code > 16) return reject(new GrpcStatusError(GRPC.UNKNOWN, `the plugin sent an invalid grpc-status (${String(st['grpc-status']).slice(0, 20)})`));
        if (code !== 0) return reject(new GrpcStatusError(code, percentDecode(st['grpc-message'])));
        if (pending.length) return reject(new GrpcStatusError(GRPC.INTERNAL, 'the answer ended inside a message'));
        if (message === undefined) return reject(new GrpcStatusError(GRPC.UNIMPLEMENTED, 'the plugin answered OK without a message'));
        return resolve(message);
      }
      if (httpStatus && httpStatus !== 200) return reject(new GrpcStatusError(statusOfHttp(httpStatus), `the plugin answered HTTP ${httpStatus}, not gRPC`));
      if (httpStatus === 200 && !grpcType) return reject(new GrpcStatusError(GRPC.UNKNOWN, 'the plugin answered without content-type application/grpc'));
      if (session.destroyed || session.closed || !httpStatus) {
        // The connection failed or went away (or the stream was refused before any answer).
        const rst = stream.rstCode;
        if (rst && rst !== constants.NGHTTP2_NO_ERROR && rst !== constants.NGHTTP2_CANCEL && rst !== constants.NGHTTP2_REFUSED_STREAM && !session.destroyed) {
          return reject(new GrpcStatusError(statusOfReset(rst), `the plugin reset the call (HTTP/2 code ${rst})`));
        }
        return reject(new GrpcStatusError(GRPC.UNAVAILABLE, 'the connection to the plugin failed or closed before it answered'));
      }
      const rst = stream.rstCode;
      if (rst !== undefined && rst !== constants.NGHTTP2_NO_ERROR) return reject(new GrpcStatusError(statusOfReset(rst), `the plugin reset the call (HTTP/2 code ${rst})`));
      reject(new GrpcStatusError(GRPC.INTERNAL, 'the answer ended without a grpc-status'));
    });
    stream.end(frame);
  });
}
