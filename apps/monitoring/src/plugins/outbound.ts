import { fetchUrl, type OutboundPolicy } from '@platform/net';

/**
 * Outbound HTTP for plugins (a data source's reachability check, SNS's SubscribeURL), through the
 * platform's guarded fetch (@platform/net): http(s) only, bounded in time and size, never to
 * link-local or metadata addresses, and to private ones only where the allow-list says
 * (OUTBOUND_ALLOW_PRIVATE). A failure is @platform/net's uniform `OutboundRefused` (detail for the log).
 */
export async function httpGet(url: URL, o: { policy: OutboundPolicy; timeoutMs?: number; maxBytes?: number; key: string }) {
  const res = await fetchUrl(url.href, {
    policy: o.policy,
    timeoutMs: o.timeoutMs ?? 5000,
    maxBytes: o.maxBytes ?? 1_000_000,
    maxRedirects: 0,
    key: o.key,
    headers: { accept: 'application/json, */*' },
  });
  return { status: res.status, body: res.body.toString('utf8') };
}
