import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isApiError } from '@platform/errors';
import { endSpan, startClientSpan } from '@platform/telemetry';
import { resolveAllowedAddress, type Resolver } from './address-guard';

export interface FetchOptions {
  /** Private, loopback and link-local targets are refused unless this is set (configuration). */
  allowPrivate: boolean;
  /** openUrl: until the response headers of each hop; fetchUrl: the whole exchange. */
  timeoutMs: number;
  /** Cancels the exchange at any point, the body's stream included. */
  signal?: AbortSignal;
  /** Error key named when an address is refused (e.g. `plugin_info.options.url`). */
  key: string;
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** How host names are resolved (the system's resolver; tests answer names with given addresses). */
  resolve?: Resolver;
}

/** A fetch that did not succeed: unreachable, timed out, too large, too many redirects. */
export class FetchFailure extends Error {}

/**
 * A URL as messages (answers, job task errors, logs) show it: scheme, host and path, without
 * credentials, query or fragment, which may hold a secret (a pre-signed URL's signature, an SNS
 * confirmation token, `user:password@`). A text that is not a URL is not shown.
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

function get(url: URL, address: string, family: number, o: FetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  // Inside a sampled operation: a client span until the answer's headers, its URL without query or credentials.
  const span = startClientSpan('GET', { 'http.request.method': 'GET', 'url.full': `${url.protocol}//${url.host}${url.pathname}`, 'server.address': url.hostname });
  const answer = new Promise<IncomingMessage>((resolve, reject) => {
    const req = client.get(
      url,
      {
        lookup: pinned(address, family),
        signal,
        headers: { 'user-agent': 'cloud-ops-platform', ...o.headers },
        ...(url.protocol === 'https:' && { servername: url.hostname.replace(/^\[|\]$/g, '') }),
      },
      resolve,
    );
    req.on('error', reject);
  });
  if (span) answer.then((res) => endSpan(span, undefined, { 'http.response.status_code': res.statusCode ?? 0 }), (e) => endSpan(span, e));
  return answer;
}

/** A URL a caller gave, checked for form: http(s) only, no credentials in it. */
export function parseFetchableUrl(source: string): URL {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new FetchFailure(`not a URL: ${urlForDisplay(source)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchFailure(`${url.protocol} URLs are not fetched`);
  if (url.username || url.password) throw new FetchFailure('credentials in the URL are not allowed');
  return url;
}

/**
 * GETs a URL a caller gave, with the SSRF guard on every hop: http(s) only, no credentials in the URL,
 * each host (the first and every redirect's) must resolve to public addresses unless configuration
 * allows private ones, and the connection is pinned to the address checked (no second resolution).
 * Answers the first non-redirect response as a stream (large files stream, nothing is buffered);
 * `timeoutMs` bounds each hop until its headers, `signal` cancels at any time.
 */
export async function openUrl(source: string, o: FetchOptions): Promise<{ url: string; response: IncomingMessage }> {
  const maxRedirects = o.maxRedirects ?? 5;
  let url = parseFetchableUrl(source);
  for (let hop = 0; ; hop++) {
    const { address, family } = await resolveAllowedAddress(url.hostname.replace(/^\[|\]$/g, ''), o.allowPrivate, o.key, o.resolve);
    const hopTimeout = new AbortController();
    const timer = setTimeout(() => hopTimeout.abort(), o.timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, hopTimeout.signal]) : hopTimeout.signal;
    let res: IncomingMessage;
    try {
      res = await get(url, address, family, o, signal);
    } catch (e) {
      if (e instanceof FetchFailure || isApiError(e)) throw e;
      if (hopTimeout.signal.aborted) throw new FetchFailure(`no answer from ${url.host} within ${o.timeoutMs} ms`);
      if (o.signal?.aborted) throw new FetchFailure(`fetching ${urlForDisplay(url)} was cancelled`);
      const err = e as Error & { code?: string };
      throw new FetchFailure(`${urlForDisplay(url)} is not reachable: ${err.code ?? err.message}`);
    } finally {
      clearTimeout(timer);
    }
    // From here only the caller's signal may end the body's stream.
    if (o.signal) o.signal.addEventListener('abort', () => res.destroy(new FetchFailure(`fetching ${urlForDisplay(url)} was cancelled`)), { once: true });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new FetchFailure(`more than ${maxRedirects} redirects`);
      url = parseFetchableUrl(new URL(res.headers.location, url).href);
      continue;
    }
    return { url: url.href, response: res };
  }
}

/** openUrl, then the whole body (at most `maxBytes`) with the status; `timeoutMs` bounds the whole exchange. */
export async function fetchUrl(source: string, o: FetchOptions & { maxBytes: number }): Promise<{ url: string; status: number; body: Buffer }> {
  const whole = new AbortController();
  const timer = setTimeout(() => whole.abort(), o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, whole.signal]) : whole.signal;
  try {
    const { url, response: res } = await openUrl(source, { ...o, signal });
    const declared = Number(res.headers['content-length'] ?? 0);
    if (declared > o.maxBytes) {
      res.destroy();
      throw new FetchFailure(`${urlForDisplay(url)} answered a body larger than ${o.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of res as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > o.maxBytes) {
          res.destroy();
          throw new FetchFailure(`${urlForDisplay(url)} answered a body larger than ${o.maxBytes} bytes`);
        }
        chunks.push(c);
      }
    } catch (e) {
      if (e instanceof FetchFailure && !whole.signal.aborted) throw e;
      if (whole.signal.aborted) throw new FetchFailure(`no answer from ${new URL(url).host} within ${o.timeoutMs} ms`);
      throw new FetchFailure(`cannot read ${urlForDisplay(url)}: ${(e as Error).message}`);
    }
    return { url, status: res.statusCode ?? 0, body: Buffer.concat(chunks) };
  } catch (e) {
    if (e instanceof FetchFailure && whole.signal.aborted && !/within/.test(e.message)) {
      throw new FetchFailure(`no answer from ${new URL(source).host} within ${o.timeoutMs} ms`);
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
