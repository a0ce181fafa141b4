import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { isApiError } from '@platform/errors';
import { FetchFailure, isPrivateAddress, openUrl, parseFetchableUrl, urlForDisplay } from '@platform/net';
import { PluginError } from './types';

/**
 * The data-source plugin's view of @platform/net's guarded fetch (SSRF guard on every hop, address
 * pinned, streaming): its failures become the plugin errors a task records.
 */
export const isBlockedAddress = isPrivateAddress;

export interface FetchOptions {
  allowPrivate: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRedirects?: number;
}

/** Validates a URL's form and, for a literal IP host, its address (at register/verify time). */
export function checkUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = parseFetchableUrl(raw);
  } catch (e) {
    throw new PluginError('ERROR_INVALID_URL', `${urlForDisplay(raw)}: ${(e as Error).message} (only http and https URLs without credentials are supported).`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) {
    throw new PluginError('ERROR_UNSAFE_URL', `${urlForDisplay(raw)} points to a private or local address.`);
  }
  return url;
}

/** GET a user-given URL as a stream; redirects are followed (each target checked again), non-2xx answers fail. */
export async function fetchStream(raw: string, o: FetchOptions): Promise<Readable> {
  checkUrl(raw, o.allowPrivate);
  let res;
  try {
    ({ response: res } = await openUrl(raw, {
      allowPrivate: o.allowPrivate,
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? 30_000,
      maxRedirects: o.maxRedirects ?? 3,
      key: 'base_url',
    }));
  } catch (e) {
    if (isApiError(e) && e.code === 'ERROR_ADDRESS_NOT_ALLOWED') throw new PluginError('ERROR_UNSAFE_URL', e.message);
    if (e instanceof FetchFailure && /redirects|not fetched|credentials|not a URL/.test(e.message)) throw new PluginError('ERROR_INVALID_URL', `${urlForDisplay(raw)}: ${e.message}`);
    throw e; // unreachable, timed out: worth a retry
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    res.resume();
    // 4xx will not change on a retry; 5xx may.
    if (status >= 400 && status < 500) throw new PluginError('ERROR_HTTP_FILE_NOT_FOUND', `GET ${urlForDisplay(raw)} answered ${status}.`);
    throw new Error(`GET ${urlForDisplay(raw)} answered ${status}`);
  }
  return res;
}
