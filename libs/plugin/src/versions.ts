/**
 * The order of plugin versions, newest last, for `upgrade_mode: AUTO` (docs/decisions/plugins.md
 * "Version order"). Semantic versioning's precedence, made tolerant of what upstream's plugins use:
 * - an optional leading `v`; a numeric core of any number of dot-separated parts, compared as numbers
 *   (missing parts are 0: `1.2` = `1.2.0`);
 * - anything after the core (`-rc.1`, `.dev5`, `a1`) is a pre-release, older than the core alone;
 *   pre-releases compare identifier by identifier (numbers as numbers, below words; fewer is older);
 * - `+build` metadata is ignored;
 * - a version with no numeric core (`latest`) is older than every numeric one;
 * - versions of equal precedence are ordered by their text, so the order is total and stable.
 */
interface Parsed {
  core: string[] | null;
  pre: string[];
}

const MAX_PARTS = 16;

function parse(version: string): Parsed {
  const v = version.split('+')[0].replace(/^[vV](?=\d)/, '');
  const m = /^(\d+(?:\.\d+){0,15})(.*)$/.exec(v);
  if (!m) return { core: null, pre: [] };
  const core = m[1].split('.').map((n) => n.replace(/^0+(?=\d)/, ''));
  const rest = m[2].replace(/^[-.]/, '');
  return { core, pre: rest ? rest.split(/[.-]/).slice(0, MAX_PARTS) : [] };
}

/** Two digit strings without leading zeros, as numbers (any length, no overflow). */
function compareDigits(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

function compareIdentifier(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) return compareDigits(a.replace(/^0+(?=\d)/, ''), b.replace(/^0+(?=\d)/, ''));
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePrecedence(a: Parsed, b: Parsed): number {
  if (!a.core || !b.core) return a.core ? 1 : b.core ? -1 : 0;
  for (let i = 0; i < Math.max(a.core.length, b.core.length); i++) {
    const c = compareDigits(a.core[i] ?? '0', b.core[i] ?? '0');
    if (c) return c;
  }
  if (!a.pre.length || !b.pre.length) return a.pre.length ? -1 : b.pre.length ? 1 : 0;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const c = compareIdentifier(a.pre[i], b.pre[i]);
    if (c) return c;
  }
  return a.pre.length - b.pre.length;
}

/** Negative when `a` is older than `b`, positive when newer, 0 only for the same text. */
export function compareVersions(a: string, b: string): number {
  const c = comparePrecedence(parse(a), parse(b));
  if (c) return Math.sign(c);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One published (ACTIVE, with an endpoint) plugin version a domain may use. */
export interface EndpointCandidate {
  version: string;
  endpoint: string;
  /** upstream's `endpoints`: the addresses of the version's replicas; when given, they are taken in turn instead of `endpoint`. */
  endpoints?: unknown;
  /** From a public supervisor (serves every domain); the domain's own supervisor wins on the same version. */
  is_public: boolean;
}

export type UpgradeMode = 'AUTO' | 'MANUAL';

export interface ResolvedEndpoint {
  /** The first of `endpoints`. */
  endpoint: string;
  /** Every address serving the version: the candidate's `endpoints`, else its `endpoint` alone. Callers take them in turn (`EndpointTurns`). */
  endpoints: string[];
  /** The version the endpoint serves. */
  version: string;
  /** upstream's field: the version served (with AUTO, the newest; upstream answers it in both modes). */
  updated_version: string;
}

/**
 * Picks the endpoint: MANUAL the version asked for, AUTO the newest (compareVersions). Among rows of
 * the same version the domain's own supervisor wins over a public one, then the order given (the
 * source lists the most recently published first). Undefined: nothing matches (a 404 for the caller).
 */
export function pickEndpoint(candidates: readonly EndpointCandidate[], version: string, mode: UpgradeMode): ResolvedEndpoint | undefined {
  let best: EndpointCandidate | undefined;
  for (const c of candidates) {
    if (mode === 'MANUAL' && c.version !== version) continue;
    if (!best) {
      best = c;
      continue;
    }
    const order = mode === 'AUTO' ? compareVersions(c.version, best.version) : 0;
    if (order > 0 || (order === 0 && c.version === best.version && best.is_public && !c.is_public)) best = c;
  }
  if (!best) return undefined;
  const listed = Array.isArray(best.endpoints) ? best.endpoints.filter((e): e is string => typeof e === 'string' && e !== '') : [];
  const endpoints = listed.length ? listed : [best.endpoint];
  return { endpoint: endpoints[0], endpoints, version: best.version, updated_version: best.version };
}

/**
 * upstream's round robin over a version's `endpoints` (plugin_service `_select_endpoint`: each
 * resolution takes the next address): one turn counter per key, in memory, at most `max` keys (the
 * oldest forgotten first; a forgotten key starts again at its first address).
 */
export class EndpointTurns {
  private readonly next = new Map<string, number>();

  constructor(private readonly max = 10_000) {}

  take(key: string, endpoints: readonly string[]): string {
    if (endpoints.length <= 1) return endpoints[0] ?? '';
    const i = this.next.get(key) ?? 0;
    this.next.delete(key);
    if (this.next.size >= this.max) this.next.delete(this.next.keys().next().value!);
    this.next.set(key, (i + 1) % endpoints.length);
    return endpoints[i % endpoints.length];
  }
}
