import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '@platform/errors';

/** Addresses a plugin must not reach unless configuration allows: private, loopback, link-local, reserved. */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 127], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215): a translator of this network's own choosing
] as const) blocked.addSubnet(net, bits, 'ipv6');

/**
 * The IPv4 address an IPv6 address carries: mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d
 * (deprecated, still routed by some stacks), SIIT-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16. Each is judged by that IPv4 address, in whatever notation it is written.
 */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase().replace(/%.*$/, ''); // without a zone id (fe80::1%eth0)
  // Dotted forms: written out to words below, so that every spelling (::ffff:0:0:1.2.3.4 too) meets one check.
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(lower);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(2).map(Number);
    return embeddedIpv4(`${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`);
  }
  const words = expandIpv6(lower);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (words.slice(0, 5).every((w) => w === 0) && (words[5] === 0xffff || words[5] === 0)) return v4(words[6], words[7]);
  if (words.slice(0, 4).every((w) => w === 0) && words[4] === 0xffff && words[5] === 0) return v4(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return v4(words[6], words[7]);
  if (words[0] === 0x2002) return v4(words[1], words[2]);
  return undefined;
}

function expandIpv6(ip: string): number[] | undefined {
  if (ip.includes('.')) return undefined;
  const [head, tail] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const fill = ip.includes('::') ? 8 - h.length - t.length : 0;
  const all = [...h, ...Array(fill).fill('0'), ...t];
  return all.length === 8 ? all.map((w) => parseInt(w, 16)) : undefined;
}

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    return v4 ? blocked.check(v4, 'ipv4') : blocked.check(ip, 'ipv6');
  }
  return true;
}

/** Every address a host name resolves to. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, DNS; numeric forms such as `2130706433` and `0x7f.1` too). */
export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves `host` and returns the address to connect to. Every address the name resolves to must be
 * public unless `allowPrivate`: a name with one private address could be made to use it. The caller
 * connects to the returned address (not the name again), so a second resolution cannot change it.
 * `resolve` is the seam tests use to answer a name with given addresses (DNS rebinding, a name of a
 * public service resolving to loopback).
 */
export async function resolveAllowedAddress(
  host: string,
  allowPrivate: boolean,
  key: string,
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: number }> {
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  } catch {
    throw new ApiError(400, 'ERROR_INVALID_PARAMETER', `Invalid parameter. (key = ${key}, reason = cannot resolve host ${host})`, { key });
  }
  if (!addresses.length) {
    throw new ApiError(400, 'ERROR_INVALID_PARAMETER', `Invalid parameter. (key = ${key}, reason = cannot resolve host ${host})`, { key });
  }
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      throw new ApiError(
        400,
        'ERROR_ADDRESS_NOT_ALLOWED',
        `${host} resolves to ${bad.address}, a private address (private, loopback, link-local or reserved), which this deployment does not allow. (key = ${key})`,
        { key },
      );
    }
  }
  return addresses[0];
}
