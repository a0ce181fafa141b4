import type { IncomingMessage, ServerResponse } from 'node:http';
import { inspectJson, type JsonLimits } from '@platform/core';
import { ApiError, errors } from '@platform/errors';

/**
 * The bounds of a request body (platform-wide, in docs/decisions/platform.md): at most the body limit
 * in bytes (1 MiB unless an app sets another), at most 32 levels of nesting, and no key that reaches a
 * prototype (`__proto__`, `constructor`, `prototype`, also as a dotted segment) anywhere in it.
 */
export const BODY_LIMITS: Readonly<Required<JsonLimits>> = Object.freeze({ maxDepth: 32, refuseUnsafeKeys: true, refuseNul: true });

/** A JSON text as a value within `limits`: 400 ERROR_INVALID_JSON when malformed, 400 naming the key past a limit. */
export function parseJsonText(text: string, limits: JsonLimits = BODY_LIMITS): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.malformedJson();
  }
  const problem = inspectJson(value, limits);
  if (problem) throw errors.invalidParameter(problem.path, problem.reason);
  return value;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
export function parseBytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!m) throw new Error(`invalid body limit ${text}`);
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]);
}

const JSON_TYPE = /^application\/(?:[a-z0-9.+-]*\+)?json$/;

/** The raw bytes of a request body, at most `limit` (413 past it, read no further). */
export async function readBody(req: IncomingMessage, limit: number, limitText: string): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw errors.payloadTooLarge(limitText);
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeListener('data', onData);
        reject(errors.payloadTooLarge(limitText));
      } else chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', resolve);
    req.on('aborted', () => reject(new ApiError(400, 'ERROR_REQUEST_ABORTED', 'Request aborted.')));
    req.on('error', reject);
  });
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/** A JSON media type (`application/json`, `application/<x>+json`) with no charset but UTF-8's, else a 415. */
function checkJsonMediaType(contentType: string | undefined) {
  const [mediaType, ...params] = String(contentType ?? '').split(';');
  if (!JSON_TYPE.test(mediaType.trim().toLowerCase())) throw errors.unsupportedMediaType();
  const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='));
  if (charset && !['charset=utf-8', 'charset="utf-8"', 'charset=utf8'].includes(charset)) throw errors.unsupportedMediaType();
}

/**
 * The body of an operation: a JSON object (no body is {}), at most `limit` bytes, UTF-8, within
 * BODY_LIMITS. Every failure is its envelope: 415 for another media type or charset, 413 when too
 * large, 400 for malformed JSON, a body that is not an object, or one past a limit (naming the key).
 */
export async function readJsonBody(req: IncomingMessage, limit: number, limitText: string): Promise<unknown> {
  const declared = req.headers['content-length'];
  if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) return {};
  const contentType = req.headers['content-type'];
  // What clients send almost always (one comparison); anything else through the whole check.
  if (contentType !== 'application/json' && contentType !== 'application/json; charset=utf-8') checkJsonMediaType(contentType);
  const text = (await readBody(req, limit, limitText)).toString('utf8');
  if (!text.trim()) return {};
  const body = parseJsonText(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw errors.invalidArgument('Request body must be a JSON object.');
  return body;
}

/**
 * A JSON answer, its headers and body written in one go (what express's res.json does, minus its content
 * negotiation). The headers go to writeHead as one list: Node validates and stores them once, rather
 * than header by header (headers set before, such as Retry-After, are kept).
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, requestId?: string) {
  const text = JSON.stringify(body);
  const headers = ['content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(text))];
  if (requestId !== undefined) headers.push('x-request-id', requestId);
  res.writeHead(status, headers);
  res.end(text);
}

/** How long, and how much, a refused body is still read after its answer (see lingerAfterAnswer). */
export const LINGER = { ms: 2_000, bytes: 8 * 1024 * 1024 };

/**
 * For a request answered before its body was read (no token, too large, another media type): the
 * answer says `Connection: close`, and the connection then lingers, reading and dropping what the client
 * is still sending, for at most LINGER.ms and LINGER.bytes, before it closes. Closing at once would make
 * the client's next write fail (EPIPE / ECONNRESET) before it reads the answer, so a caller would see a
 * broken connection instead of the 401, 413 or 415 (nginx's lingering close, bounded the same way).
 */
export function lingerAfterAnswer(req: IncomingMessage, res: ServerResponse) {
  res.setHeader('Connection', 'close');
  const socket = req.socket;
  const start = socket.bytesRead;
  // Node ends a `Connection: close` response with socket.destroySoon(): end our side, keep reading.
  socket.destroySoon = function lingeringClose(this: typeof socket) {
    if (this.writable) this.end();
    req.resume();
    const check = setInterval(() => {
      if (this.destroyed) return clearInterval(check);
      if (this.bytesRead - start > LINGER.bytes) this.destroy();
    }, 50);
    const timer = setTimeout(() => this.destroy(), LINGER.ms);
    check.unref();
    timer.unref();
    this.once('close', () => (clearInterval(check), clearTimeout(timer)));
    this.once('end', () => this.destroy());
  };
}

