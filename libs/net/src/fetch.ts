import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isApiError } from '@platform/errors';
import { resolveAllowedAddress } from './address-guard';

export interface FetchOptions {
  /** Private, loopback and link-local targets are refused unless this is set (configuration). */
  allowPrivate: boolean;
  timeoutMs: number;
  /** Error key named when an address is refused (e.g. `plugin_info.options.url`). */
  key: string;
  maxRedirects?: number;
  headers?: Record<string, string>;
}

/** A fetch that did not succeed: unreachable, timed out, too large, too many redirects. */
export class FetchFailure extends Error {}

/** A lookup that answers the address already checked, so the connection goes where the guard looked. */
function pinned(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

function get(url: URL, address: string, family: number, o: FetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
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
}

/**
 * GETs a URL a caller gave, with the SSRF guard on every hop: http(s) only, no credentials in the URL,
 * each host (the first and every redirect's) must resolve to public addresses unless configuration
 * allows private ones, and the connection is pinned to the address checked (no second resolution).
 * Answers the first non-redirect response as a stream; bounded in time (the whole exchange) and hops.
 */
export async function openUrl(source: string, o: FetchOptions): Promise<{ url: string; response: IncomingMessage; signal: AbortSignal }> {
  const signal = AbortSignal.timeout(o.timeoutMs);
  const maxRedirects = o.maxRedirects ?? 5;
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new FetchFailure(`not a URL: ${source}`);
  }
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchFailure(`${url.protocol} URLs are not fetched`);
    if (url.username || url.password) throw new FetchFailure('credentials in the URL are not allowed');
    const { address, family } = await resolveAllowedAddress(url.hostname.replace(/^\[|\]$/g, ''), o.allowPrivate, o.key);
    let res: IncomingMessage;
    try {
      res = await get(url, address, family, o, signal);
    } catch (e) {
      if (e instanceof FetchFailure || isApiError(e)) throw e;
      if (signal.aborted) throw new FetchFailure(`no answer from ${url.host} within ${o.timeoutMs} ms`);
      const err = e as Error & { code?: string };
      throw new FetchFailure(`${url.href} is not reachable: ${err.code ?? err.message}`);
    }
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= maxRedirects) throw new FetchFailure(`more than ${maxRedirects} redirects`);
      url = new URL(res.headers.location, url);
      continue;
    }
    return { url: url.href, response: res, signal };
  }
}

/** openUrl, then the whole body (at most `maxBytes`) with the status. */
export async function fetchUrl(source: string, o: FetchOptions & { maxBytes: number }): Promise<{ url: string; status: number; body: Buffer }> {
  const { url, response: res, signal } = await openUrl(source, o);
  const declared = Number(res.headers['content-length'] ?? 0);
  if (declared > o.maxBytes) {
    res.destroy();
    throw new FetchFailure(`${url} answered a body larger than ${o.maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of res as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > o.maxBytes) {
        res.destroy();
        throw new FetchFailure(`${url} answered a body larger than ${o.maxBytes} bytes`);
      }
      chunks.push(c);
    }
  } catch (e) {
    if (e instanceof FetchFailure) throw e;
    if (signal.aborted) throw new FetchFailure(`no answer from ${new URL(url).host} within ${o.timeoutMs} ms`);
    throw new FetchFailure(`cannot read ${url}: ${(e as Error).message}`);
  }
  return { url, status: res.statusCode ?? 0, body: Buffer.concat(chunks) };
}
