import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isApiError } from '@platform/errors';
import { resolveAllowedAddress } from './address-guard';

export interface FetchOptions {
  allowPrivateHosts: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Error key for refused addresses (e.g. `sync_options.github.url`). */
  key: string;
}

export class FetchFailure extends Error {}

/** A lookup that answers the address already checked, so the connection goes where the guard looked. */
function pinned(address: string, family: number): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

function get(url: URL, address: string, family: number, o: FetchOptions, signal: AbortSignal): Promise<{ status: number; location?: string; body: Buffer }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      url,
      {
        lookup: pinned(address, family),
        signal,
        headers: { accept: 'application/schema+json, application/json;q=0.9, */*;q=0.1', 'user-agent': 'platform-repository-sync' },
        ...(url.protocol === 'https:' && { servername: url.hostname.replace(/^\[|\]$/g, '') }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.resume();
          return resolve({ status, location: res.headers.location, body: Buffer.alloc(0) });
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > o.maxBytes) {
          res.destroy();
          return reject(new FetchFailure(`the document is larger than ${o.maxBytes} bytes`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > o.maxBytes) {
            res.destroy();
            reject(new FetchFailure(`the document is larger than ${o.maxBytes} bytes`));
          } else chunks.push(c);
        });
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

/**
 * GETs a document over http(s) with the SSRF guard on every hop: each host (the first and every
 * redirect's) must resolve to public addresses unless configuration allows private ones, and the
 * connection is pinned to the address checked. Bounded in time, size and redirects.
 */
export async function fetchDocument(source: string, o: FetchOptions): Promise<{ url: string; body: Buffer }> {
  const signal = AbortSignal.timeout(o.timeoutMs);
  let url = new URL(source);
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchFailure(`${url.protocol} URLs are not fetched`);
    const { address, family } = await resolveAllowedAddress(url.hostname.replace(/^\[|\]$/g, ''), o.allowPrivateHosts, o.key);
    let res;
    try {
      res = await get(url, address, family, o, signal);
    } catch (e) {
      if (e instanceof FetchFailure || isApiError(e)) throw e;
      if (signal.aborted) throw new FetchFailure(`no answer from ${url.host} within ${o.timeoutMs} ms`);
      throw new FetchFailure(`cannot fetch ${url.href}: ${(e as Error).message}`);
    }
    if (res.status >= 300 && res.status < 400 && res.location) {
      if (hop >= o.maxRedirects) throw new FetchFailure(`more than ${o.maxRedirects} redirects`);
      url = new URL(res.location, url);
      continue;
    }
    if (res.status !== 200) throw new FetchFailure(`${url.href} answered HTTP ${res.status}`);
    return { url: url.href, body: res.body };
  }
}
