import { ApiError, isApiError } from '@platform/errors';
import { FetchFailure, fetchUrl } from '@platform/net';

/**
 * Outbound HTTP for plugins (a data source's reachability check, SNS's SubscribeURL), through the
 * platform's guarded fetch (@platform/net): http(s) only, bounded in time and size, and never to
 * private, loopback or link-local addresses unless `allowPrivate` (ALLOW_PRIVATE_URLS) says so.
 */
export class OutboundError extends Error {}

export async function httpGet(url: URL, o: { allowPrivate: boolean; timeoutMs?: number; maxBytes?: number; key: string }) {
  try {
    const res = await fetchUrl(url.href, {
      allowPrivate: o.allowPrivate,
      timeoutMs: o.timeoutMs ?? 5000,
      maxBytes: o.maxBytes ?? 1_000_000,
      maxRedirects: 0,
      key: o.key,
      headers: { accept: 'application/json, */*' },
    });
    return { status: res.status, body: res.body.toString('utf8') };
  } catch (e) {
    // A refused address or a failed fetch are the same thing to a plugin: the target is not usable.
    if (e instanceof FetchFailure || (isApiError(e) && e.code === 'ERROR_ADDRESS_NOT_ALLOWED')) throw new OutboundError((e as Error).message);
    throw e;
  }
}

/** An outbound failure as the API error of a verify-plugin call. */
export function verifyFailed(pluginId: string, reason: string): ApiError {
  return new ApiError(400, 'ERROR_PLUGIN_VERIFY_FAILED', `Plugin verification failed. (plugin_id = ${pluginId}, reason = ${reason})`);
}
