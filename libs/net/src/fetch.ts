import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { endSpan, startClientSpan } from '@platform/telemetry';
import { addressAllowed, canonicalHost, resolveAllowedAddress, type Resolver } from './address-guard';
import type { OutboundPolicy } from './policy';
import { isOutboundRefused, OutboundRefused } from './refusal';

export interface FetchOptions {
  /** Which private destinations may be reached (OUTBOUND_ALLOW_PRIVATE); link-local and metadata never. */
  policy: OutboundPolicy;
  /** openUrl: until the response headers of each hop; fetchUrl: the whole exchange. */
  timeoutMs: number;
  /** Cancels the exchange at any point, the body's stream included. */
  signal?: AbortSignal;
  /** The parameter a refusal names (e.g. `plugin_info.options.url`). */
  key: string;
  /** Redirects followed, each hop checked again (default 5, at most 10). */
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** How host names are resolved (the system's resolver; tests answer names with given addresses). */
  resolve?: Resolver;
  /** Called with the address just before a connection to it is opened (a seam: tests record every connection). */
  onConnect?: (address: string, port: number) => void;
}

/** The bound on redirect hops, whatever a caller asks. */
export const MAX_REDIRECTS = 10;

/**
 * A URL as log lines show it: scheme, host and path, without credentials, query or fragment, which
 * may hold a secret (a pre-signed URL's signature, an SNS confirmation token, `user:password@`). A
 * text that is not a URL is not shown.
 */
export function urlForDisplay(source: string | URL): string {
  let url: URL;
  try {
    url = typeof source === 'string' ? new URL(source) : source;
  } catch {
    return '(not a URL)';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URL`;
  return `${url.protocol}//${url.host}${url.pathname}${url.search ? '?…' : ''}`;
}

/** A lookup that answers the address already checked, so the connection goes where the guard looked. */
function pinned(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

/** Two spellings of one address (`2001:db8:0:0::1` and `2001:db8::1`): compared as the URL parser writes them. */
function sameAddress(a: string, b: string): boolean {
  return a === b || (isIP(a) === 6 && isIP(b) === 6 && canonicalHost(a) === canonicalHost(b));
}

const portOf = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));

function get(url: URL, host: string, pin: { address: string; family: number }, o: FetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  o.onConnect?.(pin.address, portOf(url));
  // Inside a sampled operation: a client span until the answer's headers, its URL without query or credentials.
  const span = startClientSpan('GET', { 'http.request.method': 'GET', 'url.full': `${url.protocol}//${url.host}${url.pathname}`, 'server.address': url.hostname });
  const answer = new Promise<IncomingMessage>((resolve, reject) => {
    const req = client.get(
      url,
      {
        lookup: pinned(pin.address, pin.family),
        // A fresh connection per request: a pooled socket was opened for another check.
        agent: false,
        signal,
        headers: { 'user-agent': 'cloud-ops-platform', ...o.headers },
        ...(url.protocol === 'https:' && { servername: host }),
      },
      resolve,
    );
    // The address actually connected to is checked again before a byte is sent.
    req.on('socket', (socket: Socket) =>
      socket.once('connect', () => {
        const peer = socket.remoteAddress ?? '';
        if (!sameAddress(peer, pin.address) || !addressAllowed(o.policy, host, peer)) {
          req.destroy(new OutboundRefused(o.key, `${host} connected to ${peer}, not the checked ${pin.address}`));
        }
      }),
    );
    req.on('error', reject);
  });
  if (span) answer.then((res) => endSpan(span, undefined, { 'http.response.status_code': res.statusCode ?? 0 }), (e) => endSpan(span, e));
  return answer;
}

/** A URL a caller gave, checked for form: http(s) only, no credentials in it. */
export function parseFetchableUrl(source: string, key = 'url'): URL {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new OutboundRefused(key, `not a URL: ${urlForDisplay(source)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused(key, `${url.protocol} URLs are not fetched`);
  if (url.username || url.password) throw new OutboundRefused(key, 'credentials in the URL are not allowed');
  return url;
}

function failure(e: unknown, url: URL, o: FetchOptions, hopTimedOut: boolean): OutboundRefused {
  if (isOutboundRefused(e)) return e;
  if (hopTimedOut) return new OutboundRefused(o.key, `no answer from ${url.host} within ${o.timeoutMs} ms`);
  if (o.signal?.aborted) return new OutboundRefused(o.key, `fetching ${urlForDisplay(url)} was cancelled`);
  const err = e as Error & { code?: string };
  return new OutboundRefused(o.key, `${urlForDisplay(url)} is not reachable: ${err.code ?? err.message}`);
}

/**
 * GETs a URL a caller gave, with the SSRF guard on every hop: http(s) only, no credentials in the URL,
 * each host (the first and every redirect's) must resolve to addresses the policy allows, the
 * connection is pinned to the address checked (no second resolution) and its peer checked again on
 * connect, and redirects are followed one by one, at most `maxRedirects` (≤ MAX_REDIRECTS).
 * Answers the first non-redirect response as a stream (large files stream, nothing is buffered);
 * `timeoutMs` bounds each hop until its headers, `signal` cancels at any time. Every failure is the
 * uniform `OutboundRefused`, its detail for the log.
 */
export async function openUrl(source: string, o: FetchOptions): Promise<{ url: string; response: IncomingMessage }> {
  const maxRedirects = Math.min(o.maxRedirects ?? 5, MAX_REDIRECTS);
  let url = parseFetchableUrl(source, o.key);
  for (let hop = 0; ; hop++) {
    const host = canonicalHost(url.hostname);
    const pin = await resolveAllowedAddress(host, o.policy, o.key, o.resolve);
    const hopTimeout = new AbortController();
    const timer = setTimeout(() => hopTimeout.abort(), o.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, hopTimeout.signal]) : hopTimeout.signal;
    let res: IncomingMessage;
    try {
      res = await get(url, host, pin, o, signal);
    } catch (e) {
      throw failure(e, url, o, hopTimeout.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new OutboundRefused(o.key, `more than ${maxRedirects} redirects`);
      let next: string;
      try {
        next = new URL(res.headers.location, url).href;
      } catch {
        throw new OutboundRefused(o.key, `${urlForDisplay(url)} redirected to something that is not a URL`);
      }
      url = parseFetchableUrl(next, o.key);
      continue;
    }
    // From here only the caller's signal may end the body's stream.
    const done = url;
    if (o.signal) o.signal.addEventListener('abort', () => res.destroy(new OutboundRefused(o.key, `fetching ${urlForDisplay(done)} was cancelled`)), { once: true });
    return { url: url.href, response: res };
  }
}

/** openUrl, then the whole body (at most `maxBytes`) with the status; `timeoutMs` bounds the whole exchange. */
export async function fetchUrl(source: string, o: FetchOptions & { maxBytes: number }): Promise<{ url: string; status: number; body: Buffer }> {
  const whole = new AbortController();
  const timer = setTimeout(() => whole.abort(), o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, whole.signal]) : whole.signal;
  const late = () => new OutboundRefused(o.key, `no answer from ${urlForDisplay(source)} within ${o.timeoutMs} ms`);
  try {
    const { url, response: res } = await openUrl(source, { ...o, signal });
    const tooLarge = () => new OutboundRefused(o.key, `${urlForDisplay(url)} answered a body larger than ${o.maxBytes} bytes`);
    if (Number(res.headers['content-length'] ?? 0) > o.maxBytes) {
      res.destroy();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of res as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > o.maxBytes) {
          res.destroy();
          throw tooLarge();
        }
        chunks.push(c);
      }
    } catch (e) {
      if (whole.signal.aborted && !o.signal?.aborted) throw late();
      if (isOutboundRefused(e)) throw e;
      throw new OutboundRefused(o.key, `cannot read ${urlForDisplay(url)}: ${(e as { code?: string }).code ?? (e as Error).message}`);
    }
    return { url, status: res.statusCode ?? 0, body: Buffer.concat(chunks) };
  } catch (e) {
    if (whole.signal.aborted && !o.signal?.aborted) throw late();
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
