import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '@platform/errors';

/**
 * Outbound HTTP for plugins (a data source's reachability check, SNS's SubscribeURL). Only http(s),
 * bounded in time and size, and never to private, loopback or link-local addresses unless
 * `allowPrivate` (ALLOW_PRIVATE_URLS) says so: the URL comes from a caller, so it must not become a
 * way into the cluster's own network.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

export class OutboundError extends Error {}

export interface OutboundOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxBytes?: number;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Parses and checks a URL: http(s) only, and its host's addresses public unless private ones are allowed. */
export async function checkOutboundUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError(`only http and https URLs are allowed (${url.protocol})`);
  if (url.username || url.password) throw new OutboundError('credentials in the URL are not allowed');
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    if (!addresses.length) throw new OutboundError(`cannot resolve ${host}`);
    const blocked = addresses.find(isPrivateAddress);
    if (blocked) throw new OutboundError(`${host} resolves to a private address (${blocked}); set ALLOW_PRIVATE_URLS to allow it`);
  }
  return url;
}

/** GET a URL: status and body text (at most maxBytes). Network failures and timeouts are OutboundErrors. */
export async function httpGet(url: URL, o: OutboundOptions): Promise<{ status: number; body: string }> {
  const timeoutMs = o.timeoutMs ?? 5000;
  const maxBytes = o.maxBytes ?? 1_000_000;
  let res: Response;
  try {
    res = await fetch(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json, */*' } });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    const reason = err.name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : (err.cause?.code ?? err.message);
    throw new OutboundError(`${url.origin} is not reachable: ${reason}`);
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new OutboundError(`${url.origin} answered more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return { status: res.status, body: Buffer.concat(chunks).toString('utf8') };
}

/** An outbound failure as the API error of a verify-plugin call. */
export function verifyFailed(pluginId: string, reason: string): ApiError {
  return new ApiError(400, 'ERROR_PLUGIN_VERIFY_FAILED', `Plugin verification failed. (plugin_id = ${pluginId}, reason = ${reason})`);
}
