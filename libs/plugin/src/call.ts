import { Metadata, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { errors, pluginError, pluginErrors, type ApiError, type GrpcStatusName } from '@platform/errors';
import { DecodeError, EncodeError } from './codec';
import type { ChannelLease, ChannelPool } from './channels';
import type { PluginClientConfig, StreamBounds } from './config';
import type { PluginEndpoint } from './endpoint';
import { GRPC_STATUS } from './grpc-wire';
import { h2Unary } from './h2';
import type { RpcMethod } from './protocol';
import { redact, secretsOf } from './redact';

/** Per-call options of a unary call. */
export interface CallOptions {
  /** Overrides the call kind's deadline (ms). */
  timeoutMs?: number;
  /** Cancels the call (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Per-call options of a server stream: its bounds (defaults from the configuration) and a signal. */
export interface StreamOptions extends Partial<StreamBounds> {
  signal?: AbortSignal;
}

export interface CallTarget {
  pool: ChannelPool;
  config: PluginClientConfig;
  endpoint: PluginEndpoint;
}

const statusName = (code: number): GrpcStatusName | undefined => GRPC_STATUS[code];
const UNAVAILABLE = 14;
const identity = (b: Buffer) => b;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** `Event.parse`: how errors name a method (made once per method). */
const labels = new WeakMap<object, string>();
function labelOf(method: RpcMethod<unknown, never, unknown>): string {
  let l = labels.get(method);
  if (l === undefined) labels.set(method, (l = `${method.service.split('.').pop()}.${method.name}`));
  return l;
}

const isServiceError = (e: unknown): e is ServiceError => typeof (e as ServiceError)?.code === 'number' && 'details' in (e as object);

/** The request's bytes, refused before any call when it cannot be sent or is too large. */
function encodeRequest<ReqInput>(method: RpcMethod<unknown, ReqInput>, request: ReqInput, config: PluginClientConfig, label: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = method.request.encode(request);
  } catch (e) {
    if (e instanceof EncodeError) throw errors.invalidParameter(e.path, e.reason);
    throw e;
  }
  if (bytes.length > config.maxSendBytes) {
    throw pluginErrors.requestTooLarge(`${label}: the request is ${bytes.length} bytes, more than the ${config.maxSendBytes} a plugin message may be`);
  }
  return bytes;
}

/** A gRPC failure of a call as our envelope, the plugin's text redacted. */
function callFailure(e: unknown, label: string, secrets: readonly string[], deadlineMs: number): ApiError | Error {
  if (!isServiceError(e)) return e instanceof Error ? e : new Error(String(e));
  const name = statusName(e.code) ?? 'UNKNOWN';
  const details = redact(String(e.details ?? ''), secrets);
  if (name === 'DEADLINE_EXCEEDED') return pluginErrors.unavailable(`${label}: the plugin did not answer within ${deadlineMs} ms`);
  if (name === 'RESOURCE_EXHAUSTED' && /^Received message larger than max/.test(details)) {
    return pluginErrors.responseTooLarge(`${label}: the plugin's answer is larger than a message may be (${details})`);
  }
  if (name === 'RESOURCE_EXHAUSTED' && /^Sent message larger than max/.test(details)) return pluginErrors.requestTooLarge(`${label}: ${details}`);
  return pluginError(name, details, label);
}

const unavailable = (e: unknown) => isServiceError(e) && e.code === UNAVAILABLE;

function backoff(config: PluginClientConfig, attempt: number): number {
  const d = Math.min(config.retryMaxMs, config.retryBaseMs * 2 ** (attempt - 1));
  return d / 2 + Math.random() * (d / 2);
}

/** The caller's abort, as the error the call rejects with. */
const aborted = (signal: AbortSignal) => (signal.reason instanceof Error ? signal.reason : new Error('plugin call aborted'));

/**
 * One unary call (on node:http2, h2.ts): deadline `timeoutMs` over every attempt, UNAVAILABLE retried
 * with backoff (`retryAttempts` in all, never past the deadline), then the channel dropped so that the
 * next call connects afresh; every failure an envelope with the plugin's text redacted.
 */
export async function unaryCall<Res, ReqInput>(target: CallTarget, method: RpcMethod<unknown, ReqInput, Res>, request: ReqInput, timeoutMs: number, signal?: AbortSignal): Promise<Res> {
  const label = labelOf(method);
  const bytes = encodeRequest(method, request, target.config, label);
  const secrets = secretsOf(request);
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw aborted(signal);
    const lease = target.pool.acquire(target.endpoint);
    let answer: Buffer;
    try {
      answer = await h2Unary(lease.h2, { path: method.path, message: bytes, deadline, maxReceiveBytes: target.config.maxReceiveBytes, signal });
    } catch (e) {
      if (signal?.aborted) throw aborted(signal);
      if (unavailable(e)) {
        const wait = backoff(target.config, attempt);
        if (attempt < target.config.retryAttempts && Date.now() + wait < deadline) {
          lease.release();
          await sleep(wait, signal);
          continue;
        }
        lease.retire();
      }
      throw callFailure(e, label, secrets, timeoutMs);
    } finally {
      lease.release();
    }
    try {
      return method.response.decode(answer);
    } catch (e) {
      if (e instanceof DecodeError) throw pluginErrors.invalidResponse(`${label}: the plugin's answer is not a ${method.response.typeName}: ${redact(e.message, secrets)}`);
      throw e;
    }
  }
}

/**
 * A server stream as an async iterable the consumer pulls: a message is read from the plugin only as
 * the consumer asks (gRPC's flow control holds the plugin back meanwhile), so memory stays flat at
 * any length. Bounds: the whole stream within `timeoutMs`; no message for `idleMs` while the consumer
 * waits for one ends it (503); more than `maxMessages` or `maxBytes` ends it (502). UNAVAILABLE is
 * retried as for a unary call, but only before the first message. Breaking out of the loop (or the
 * signal) cancels the call.
 */
export async function* serverStream<Res, ReqInput>(target: CallTarget, method: RpcMethod<unknown, ReqInput, Res>, request: ReqInput, options: StreamOptions = {}): AsyncGenerator<Res, void, undefined> {
  const label = labelOf(method);
  const bounds: StreamBounds = { ...target.config.stream, ...definedOnly(options) };
  const bytes = encodeRequest(method, request, target.config, label);
  const secrets = secretsOf(request);
  const { signal } = options;
  const deadline = Date.now() + bounds.timeoutMs;
  let messages = 0;
  let received = 0;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw aborted(signal);
    const lease: ChannelLease = target.pool.acquire(target.endpoint);
    const call: ClientReadableStream<Buffer> = lease.client.makeServerStreamRequest<Buffer, Buffer>(method.path, identity, identity, bytes, new Metadata(), { deadline });
    // grpc-js emits the final status as 'error' (CANCELLED after our cancel, too): never unheard.
    call.on('error', () => {});
    const onAbort = () => call.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    const it = call[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let retry = false;
    try {
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = await withIdle(it.next(), bounds.idleMs);
        } catch (e) {
          if (e === IDLE) throw pluginErrors.unavailable(`${label}: the plugin sent nothing for ${bounds.idleMs} ms`);
          if (signal?.aborted) throw aborted(signal);
          if (messages === 0 && unavailable(e)) {
            const wait = backoff(target.config, attempt);
            if (attempt < target.config.retryAttempts && Date.now() + wait < deadline) {
              retry = true;
              await sleep(wait, signal);
              break;
            }
            lease.retire();
          }
          throw callFailure(e, label, secrets, bounds.timeoutMs);
        }
        if (next.done) return;
        messages++;
        received += next.value.length;
        if (messages > bounds.maxMessages) throw pluginErrors.responseTooLarge(`${label}: the stream went past ${bounds.maxMessages} messages`);
        if (received > bounds.maxBytes) throw pluginErrors.responseTooLarge(`${label}: the stream went past ${bounds.maxBytes} bytes`);
        let decoded: Res;
        try {
          decoded = method.response.decode(next.value);
        } catch (e) {
          if (e instanceof DecodeError) throw pluginErrors.invalidResponse(`${label}: message ${messages} is not a ${method.response.typeName}: ${redact(e.message, secrets)}`);
          throw e;
        }
        yield decoded;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      call.cancel(); // a no-op once the stream ended; ends it when the consumer stopped early or it failed
      call.destroy();
      lease.release();
    }
    if (!retry) return;
  }
}

const IDLE = Symbol('idle');
function withIdle<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (t = setTimeout(() => reject(IDLE), ms)))]).finally(() => clearTimeout(t));
}

function definedOnly(o: StreamOptions): Partial<StreamBounds> {
  const out: Partial<StreamBounds> = {};
  for (const k of ['timeoutMs', 'idleMs', 'maxMessages', 'maxBytes'] as const) if (typeof o[k] === 'number') out[k] = o[k];
  return out;
}
