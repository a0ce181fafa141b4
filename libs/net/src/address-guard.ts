import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { hostIsListed, type OutboundPolicy } from './policy';
import { OutboundRefused } from './refusal';

/** Addresses a plugin must not reach unless the allow-list names them: private, loopback, link-local, reserved. */
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
 * Addresses no configuration makes reachable: link-local (cloud metadata at 169.254.169.254, the
 * link's own hosts), AWS's IPv6 metadata fd00:ec2::254, the unspecified address (0.0.0.0 and `::`,
 * which reach this host) with the rest of 0.0.0.0/8, multicast and broadcast.
 */
const never = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['169.254.0.0', 16], ['224.0.0.0', 4], ['255.255.255.255', 32]] as const) never.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['fe80::', 10], ['fd00:ec2::254', 128], ['ff00::', 8]] as const) never.addSubnet(net, bits, 'ipv6');

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
  // IPv4-compatible ::a.b.c.d, but not :: and ::1 themselves (RFC 4291 2.5.5.1): those are judged as IPv6.
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0 && words[6] === 0 && words[7] <= 1) return undefined;
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

/** Private, loopback, link-local or reserved (anything but a public unicast address); not an address: true. */
export function isPrivateAddress(ip: string): boolean {
  return judged(ip, blocked);
}

/** Refused whatever the allow-list says: link-local, metadata, unspecified, multicast; not an address: true. */
export function isNeverAllowed(ip: string): boolean {
  return judged(ip, never);
}

/** An address judged by a list: IPv6 forms that carry an IPv4 address by that IPv4 address too. */
function judged(ip: string, list: BlockList): boolean {
  const bare = ip.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return list.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    return list.check(bare, 'ipv6') || (v4 !== undefined && list.check(v4, 'ipv4'));
  }
  return true;
}

/**
 * Whether an address may be connected to for `host` under `policy`: never a link-local, metadata or
 * unspecified one; a public one always; a private one when its network is listed or `host` (the name
 * the URL gave) is. Used for every resolved address and for a connection's actual peer.
 */
export function addressAllowed(policy: OutboundPolicy, host: string, ip: string): boolean {
  if (isNeverAllowed(ip)) return false;
  if (!isPrivateAddress(ip)) return true;
  if (hostIsListed(policy, host)) return true;
  const bare = ip.replace(/%.*$/, '');
  const v4 = isIP(bare) === 6 ? embeddedIpv4(bare) : undefined;
  return policy.nets.check(bare, isIP(bare) === 4 ? 'ipv4' : 'ipv6') || (v4 !== undefined && policy.nets.check(v4, 'ipv4'));
}

/**
 * A host as the WHATWG URL parser reads it: every IPv4 spelling (`0xa9fea9fe`, `2852039166`,
 * `0251.0376.0251.0376`, `169.254.43518`) becomes its dotted form, an IPv6 address its compressed
 * form (`0:0:0:0:0:0:0:1` is `::1`), brackets and case go. A host the
 * parser refuses is answered as given (the resolver then refuses it). A trailing dot goes too.
 */
export function canonicalHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 6) {
    try {
      return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
    } catch {
      return bare.toLowerCase(); // a zone id (fe80::1%eth0), which the URL parser does not take
    }
  }
  try {
    return new URL(`http://${bare}/`).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return bare;
  }
}

/** Every address a host name resolves to. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, DNS; numeric forms such as `2130706433` and `0x7f.1` too). */
export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves `host` and returns the address to connect to. Every address the name resolves to must be
 * allowed (public, or private and on the allow-list, never link-local, metadata or unspecified): a name
 * with one refused address could be made to use it. The caller connects to the returned address (not
 * the name again), so a second resolution cannot change it. `resolve` is the seam tests use to answer
 * a name with given addresses (DNS rebinding, a name of a public service resolving to metadata).
 * A refusal is the uniform `OutboundRefused`; the address it resolved is in its log detail only.
 */
export async function resolveAllowedAddress(
  host: string,
  policy: OutboundPolicy,
  key: string,
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: number }> {
  const name = canonicalHost(host);
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(name) ? [{ address: name, family: isIP(name) }] : await resolve(name);
  } catch (e) {
    throw new OutboundRefused(key, `cannot resolve ${name}: ${(e as { code?: string }).code ?? 'failed'}`);
  }
  if (!addresses.length) throw new OutboundRefused(key, `cannot resolve ${name}: no address`);
  const bad = addresses.find((a) => !addressAllowed(policy, name, a.address));
  if (bad) throw new OutboundRefused(key, `${name} resolves to ${bad.address}, which is not allowed`);
  return addresses[0];
}
