import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { addressAllowed, canonicalHost, isPrivateAddress, openUrl, OutboundRefused, parseFetchableUrl, urlForDisplay, type OutboundPolicy } from '@platform/net';
import { PluginError } from './types';

/**
 * The data-source plugin's view of @platform/net's guarded fetch (SSRF guard on every hop, address
 * pinned, streaming). Every failure of the fetch (a refused address, an unreachable source, a timeout,
 * a status other than 2xx) is the uniform `OutboundRefused`: a task's error_message tells none of them
 * apart and quotes nothing the source sent; the detail goes to the worker's log.
 */
export const isBlockedAddress = isPrivateAddress;

/** The parameter an http-file refusal names. */
export const BASE_URL_KEY = 'options.base_url';

export interface FetchOptions {
  policy: OutboundPolicy;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRedirects?: number;
}

/** Validates a URL's form and, for a literal IP host, its address (at register/verify time). */
export function checkUrl(raw: string, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = parseFetchableUrl(raw, BASE_URL_KEY);
  } catch (e) {
    const why = e instanceof OutboundRefused ? e.detail : (e as Error).message;
    throw new PluginError('ERROR_INVALID_URL', `${urlForDisplay(raw)}: ${why} (only http and https URLs without credentials are supported).`);
  }
  const host = canonicalHost(url.hostname);
  if (isIP(host) && !addressAllowed(policy, host, host)) throw new OutboundRefused(BASE_URL_KEY, `${urlForDisplay(raw)} is an address that is not allowed`);
  return url;
}

/** GET a user-given URL as a stream; redirects are followed (each target checked again), non-2xx answers fail. */
export async function fetchStream(raw: string, o: FetchOptions): Promise<Readable> {
  checkUrl(raw, o.policy);
  const { response: res } = await openUrl(raw, {
    policy: o.policy,
    signal: o.signal,
    timeoutMs: o.timeoutMs ?? 30_000,
    maxRedirects: o.maxRedirects ?? 3,
    key: BASE_URL_KEY,
  });
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    res.resume();
    throw new OutboundRefused(BASE_URL_KEY, `GET ${urlForDisplay(raw)} answered ${status}`);
  }
  return res;
}
