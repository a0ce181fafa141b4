import { BlockList, isIP } from 'node:net';

/**
 * Which private destinations outbound calls may reach: an allow-list of host names and networks
 * (`OUTBOUND_ALLOW_PRIVATE=10.0.0.0/8,keycloak.internal,*.svc.cluster.local`). Public addresses are
 * always allowed; a private, loopback or reserved one only when its network is listed, or when the URL
 * names a listed host. Link-local, cloud metadata and the unspecified address are refused whatever the
 * list says (address-guard.ts). The empty list is production's default: no private destination.
 */
export interface OutboundPolicy {
  /** Host names as written (lower case, no trailing dot). */
  readonly hosts: ReadonlySet<string>;
  /** `*.suffix` entries, as `.suffix`. */
  readonly suffixes: readonly string[];
  readonly nets: BlockList;
  /** The entries as configured (for messages at start). */
  readonly entries: readonly string[];
}

/** The environment variable of the allow-list. */
export const OUTBOUND_ALLOW_PRIVATE = 'OUTBOUND_ALLOW_PRIVATE';

/** Global switches the allow-list replaced: a process that still gets one stops (nothing is silently ignored). */
export const LEGACY_OUTBOUND_SWITCHES = ['ALLOW_PRIVATE_URLS', 'SCHEMA_SYNC_ALLOW_PRIVATE_HOSTS', 'STORAGE_ALLOW_PRIVATE_HOSTS'] as const;

const MAX_ENTRIES = 256;
const HOST_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

export const normalizeHost = (host: string) => host.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');

function addNet(nets: BlockList, entry: string): boolean {
  const [addr, bitsText, extra] = entry.split('/');
  const family = isIP(addr);
  if (!family || extra !== undefined) return false;
  const max = family === 4 ? 32 : 128;
  const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits >= 0 && bits <= max)) return false;
  nets.addSubnet(addr, bits, family === 4 ? 'ipv4' : 'ipv6');
  return true;
}

/**
 * Parses an allow-list: comma- or space-separated CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses
 * (`127.0.0.1`, `::1`), host names (`keycloak.internal`) and `*.suffix` names (a name whose last label
 * is a number is not a host name: `300.1.1.1` is a mistyped address). A malformed entry is an
 * error naming it: a typo must not quietly allow less (or more) than the operator meant.
 */
export function parseOutboundAllowList(text: string | undefined): OutboundPolicy {
  const entries = (text ?? '').split(/[\s,]+/).map(normalizeHost).filter(Boolean);
  if (entries.length > MAX_ENTRIES) throw new Error(`${OUTBOUND_ALLOW_PRIVATE} has more than ${MAX_ENTRIES} entries`);
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const nets = new BlockList();
  for (const entry of entries) {
    if (entry.includes('/') || isIP(entry)) {
      if (!addNet(nets, entry)) throw new Error(`${OUTBOUND_ALLOW_PRIVATE}: "${entry}" is not an address or a CIDR (e.g. 10.0.0.0/8)`);
    } else if (entry.length <= 253 && HOST_NAME.test(entry) && !/(^|\.)\d+$/.test(entry)) {
      if (entry.startsWith('*.')) suffixes.push(entry.slice(1));
      else hosts.add(entry);
    } else {
      throw new Error(`${OUTBOUND_ALLOW_PRIVATE}: "${entry}" is not a host name, an address or a CIDR`);
    }
  }
  return { hosts, suffixes, nets, entries };
}

/** No private destination at all (production's default, and what tests start from). */
export const NO_PRIVATE_DESTINATIONS: OutboundPolicy = parseOutboundAllowList('');

/** Loopback only: what `npm start` and the tests that serve a target on 127.0.0.1 use. */
export const LOOPBACK_ONLY: OutboundPolicy = parseOutboundAllowList('127.0.0.0/8,::1');

/**
 * The policy of this process, from its environment. A legacy global switch stops the process with a
 * message saying what replaced it.
 */
export function outboundPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): OutboundPolicy {
  const legacy = LEGACY_OUTBOUND_SWITCHES.filter((name) => env[name] !== undefined && env[name] !== '');
  if (legacy.length) {
    throw new Error(
      `${legacy.join(', ')} ${legacy.length > 1 ? 'are' : 'is'} no longer supported: list the private hosts and networks outbound calls ` +
        `may reach in ${OUTBOUND_ALLOW_PRIVATE} (e.g. ${OUTBOUND_ALLOW_PRIVATE}=10.0.0.0/8,keycloak.internal), and remove ${legacy.join(', ')}.`,
    );
  }
  return parseOutboundAllowList(env[OUTBOUND_ALLOW_PRIVATE]);
}

/** Whether a URL's host (a name or an address literal) is on the allow-list as written. */
export function hostIsListed(policy: OutboundPolicy, host: string): boolean {
  const h = normalizeHost(host);
  if (policy.hosts.has(h)) return true;
  const family = isIP(h);
  if (family) return policy.nets.check(h, family === 4 ? 'ipv4' : 'ipv6');
  return policy.suffixes.some((s) => h.endsWith(s) && h.length > s.length);
}

/** The policy with more host names allowed (SNS_CONFIRM_ALLOWED_HOSTS for SNS confirmations). */
export function withHosts(policy: OutboundPolicy, hosts: readonly string[]): OutboundPolicy {
  return { ...policy, hosts: new Set([...policy.hosts, ...hosts.map(normalizeHost)]) };
}
