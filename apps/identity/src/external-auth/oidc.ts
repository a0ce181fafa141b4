import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { isApiError } from '@platform/errors';
import { fetchUrl, hostIsListed, isOutboundRefused, quoteForLog, type OutboundPolicy } from '@platform/net';
import type { ExternalAuthConfig } from '../config';

/**
 * OpenID Connect as a relying party that never sees a redirect: a caller brings a token the provider
 * gave it (an id_token, a JWT access token or an opaque access token) and we find out whom it names.
 *
 * - A JWT is verified here: the provider's discovery document (`<issuer>/.well-known/openid-configuration`)
 *   names its `jwks_uri`; both are cached per issuer. The signature must be by one of those keys with an
 *   asymmetric algorithm, `iss` must be the issuer, `aud` must contain the client id (and `azp`, if any,
 *   be it), `exp` must be present, no more than 24 h ahead, and `exp`/`nbf` hold within the clock skew.
 * - With users named by `email`, the claims must say `email_verified: true`.
 * - Any other token is given to the provider's `userinfo_endpoint`, which answers its claims or refuses it.
 *
 * Every outbound request goes through @platform/net's guarded fetch (private addresses only where
 * OUTBOUND_ALLOW_PRIVATE lists them), bounded in time and size; the issuer, its jwks_uri and its
 * userinfo endpoint must be https unless their host is on that list. An answer that shows the token is
 * not good is an `OidcRejection` (a 401 to the caller); a provider that cannot be asked is an
 * `OidcUnavailable` (a 503). Their messages are for the log: what reaches a caller is fixed text.
 */

/** The accepted signature algorithms: asymmetric only (never `none`, never HS* with a public key). */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const MAX_DOCUMENT_BYTES = 512 * 1024;
const MAX_USERINFO_BYTES = 64 * 1024;
const MAX_ISSUERS = 100;

/** The token does not name anyone: a 401 to the caller. `reason` is for the log (never the token). */
export class OidcRejection extends Error {}
/** The provider could not be asked (unreachable, timed out, 5xx, refused address): a 503 to the caller. */
export class OidcUnavailable extends Error {}
/** The provider answered something that is not OpenID Connect (at external-auth/set: a 400). */
export class OidcMisconfigured extends Error {}

export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  end_session_endpoint?: string;
}

export interface OidcSettings {
  issuer: string;
  client_id: string;
  user_id_claim: string;
}

/** The discovery document's URL: `/.well-known/openid-configuration` after the issuer's path (OIDC Discovery 4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** An https URL, or an http one whose host the allow-list names (an in-cluster provider). */
export function isSecureOrListed(v: unknown, policy: OutboundPolicy): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || (u.protocol === 'http:' && hostIsListed(policy, u.hostname));
  } catch {
    return false;
  }
}

async function getJson(url: string, o: { config: ExternalAuthConfig; maxBytes: number; maxRedirects?: number; headers?: Record<string, string> }) {
  let res: Awaited<ReturnType<typeof fetchUrl>>;
  try {
    res = await fetchUrl(url, {
      policy: o.config.outbound,
      timeoutMs: o.config.timeoutMs,
      maxBytes: o.maxBytes,
      maxRedirects: o.maxRedirects ?? 3,
      key: 'plugin_info.options.issuer',
      headers: { accept: 'application/json', ...o.headers },
    });
  } catch (e) {
    // Refused, unresolvable, unreachable, too slow or too large: the provider cannot be asked.
    if (isOutboundRefused(e)) throw new OidcUnavailable(e.detail);
    throw e;
  }
  return { status: res.status, json: parseObject(res.body) };
}

function parseObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The issuer's discovery document, checked: the issuer is https (or on the allow-list), the document
 * names the same issuer and a jwks_uri that is https (or on the allow-list).
 */
export async function fetchDiscovery(issuer: string, config: ExternalAuthConfig): Promise<DiscoveryDocument> {
  if (!isSecureOrListed(issuer, config.outbound)) throw new OidcMisconfigured('the issuer is not https and its host is not on OUTBOUND_ALLOW_PRIVATE');
  const url = discoveryUrl(issuer);
  const { status, json } = await getJson(url, { config, maxBytes: MAX_DOCUMENT_BYTES });
  if (status >= 500) throw new OidcUnavailable(`${url} answered ${status}`);
  if (status !== 200 || !json) throw new OidcMisconfigured(`${url} answered ${status}${json ? '' : ' without a JSON object'}`);
  if (json.issuer !== issuer) throw new OidcMisconfigured(`the provider names its issuer ${quoteForLog(json.issuer)}, not ${issuer}`);
  if (!isSecureOrListed(json.jwks_uri, config.outbound)) throw new OidcMisconfigured('the discovery document has no https jwks_uri');
  const doc: DiscoveryDocument = { issuer, jwks_uri: json.jwks_uri };
  for (const key of ['userinfo_endpoint', 'authorization_endpoint', 'token_endpoint', 'end_session_endpoint'] as const) {
    if (isSecureOrListed(json[key], config.outbound)) doc[key] = json[key];
  }
  return doc;
}

async function fetchJwks(uri: string, config: ExternalAuthConfig): Promise<JSONWebKeySet> {
  const { status, json } = await getJson(uri, { config, maxBytes: MAX_DOCUMENT_BYTES });
  if (status >= 500) throw new OidcUnavailable(`${uri} answered ${status}`);
  if (status !== 200 || !json || !Array.isArray(json.keys)) throw new OidcRejection(`the JWKS at ${uri} answered ${status} without a key set`);
  return { keys: json.keys.filter((k): k is JSONWebKeySet['keys'][number] => typeof k === 'object' && k !== null && !Array.isArray(k)) };
}

interface IssuerEntry {
  discovery?: { doc: DiscoveryDocument; until: number };
  jwks?: { keys: ReturnType<typeof createLocalJWKSet>; fetchedAt: number; until: number };
  /** One fetch at a time per issuer and document: concurrent logins wait for the same answer. */
  pendingDiscovery?: Promise<DiscoveryDocument>;
  pendingJwks?: Promise<void>;
}

/** Whether a token has the form of a JWS (three base64url parts, a JSON header naming an algorithm). */
export function looksLikeJwt(token: string): boolean {
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)) return false;
  try {
    return typeof decodeProtectedHeader(token).alg === 'string';
  } catch {
    return false;
  }
}

export class OidcVerifier {
  /** Per issuer, at most MAX_ISSUERS, the least recently used dropped first (Map order). */
  private readonly issuers = new Map<string, IssuerEntry>();

  constructor(
    private readonly config: () => ExternalAuthConfig,
    private readonly now: () => number = Date.now,
  ) {}

  private entry(issuer: string): IssuerEntry {
    let e = this.issuers.get(issuer);
    if (e) this.issuers.delete(issuer);
    else e = {};
    this.issuers.set(issuer, e);
    while (this.issuers.size > MAX_ISSUERS) this.issuers.delete(this.issuers.keys().next().value!);
    return e;
  }

  private async discovery(issuer: string, e: IssuerEntry): Promise<DiscoveryDocument> {
    if (e.discovery && e.discovery.until > this.now()) return e.discovery.doc;
    e.pendingDiscovery ??= fetchDiscovery(issuer, this.config())
      .then((doc) => {
        e.discovery = { doc, until: this.now() + this.config().cacheSeconds * 1000 };
        return doc;
      })
      .catch((err: unknown) => {
        // A provider that answers something other than OpenID Connect cannot vouch for anyone.
        throw err instanceof OidcMisconfigured ? new OidcRejection(`discovery: ${err.message}`) : err;
      })
      .finally(() => (e.pendingDiscovery = undefined));
    return e.pendingDiscovery;
  }

  private async loadJwks(doc: DiscoveryDocument, e: IssuerEntry): Promise<void> {
    e.pendingJwks ??= fetchJwks(doc.jwks_uri, this.config())
      .then((set) => {
        const now = this.now();
        e.jwks = { keys: createLocalJWKSet(set), fetchedAt: now, until: now + this.config().cacheSeconds * 1000 };
      })
      .finally(() => (e.pendingJwks = undefined));
    return e.pendingJwks;
  }

  /** The claims of a token the provider vouches for; OidcRejection / OidcUnavailable otherwise. */
  async verify(settings: OidcSettings, token: string): Promise<Record<string, unknown>> {
    try {
      const e = this.entry(settings.issuer);
      const doc = await this.discovery(settings.issuer, e);
      const claims = await (looksLikeJwt(token) ? this.verifyJwt(settings, doc, e, token) : this.userinfo(doc, token));
      checkEmailVerified(claims, settings.user_id_claim);
      return claims;
    } catch (err) {
      // The address guard's refusals (the issuer's name now resolves to a refused address, or not at all).
      if (isOutboundRefused(err)) throw new OidcUnavailable(err.detail);
      if (isApiError(err)) throw new OidcUnavailable(err.message);
      throw err;
    }
  }

  private async verifyJwt(settings: OidcSettings, doc: DiscoveryDocument, e: IssuerEntry, token: string): Promise<JWTPayload> {
    if (!e.jwks || e.jwks.until <= this.now()) await this.loadJwks(doc, e);
    const check = () =>
      jwtVerify(token, e.jwks!.keys, {
        issuer: settings.issuer,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: this.config().clockSkewSeconds,
        requiredClaims: ['exp'],
      });
    let payload: JWTPayload;
    try {
      payload = (await check()).payload;
    } catch (err) {
      // A key the cached set does not have: the provider may have rotated its keys. Refetch the set, but
      // not more often than the cooldown, so tokens with made-up key ids cannot make us fetch on every request.
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || this.now() - e.jwks!.fetchedAt < this.config().jwksCooldownSeconds * 1000) {
        throw rejection(err);
      }
      await this.loadJwks(doc, e);
      try {
        payload = (await check()).payload;
      } catch (again) {
        throw rejection(again);
      }
    }
    checkAudience(payload, settings.client_id);
    checkLifetime(payload, this.now(), this.config().clockSkewSeconds);
    return payload;
  }

  private async userinfo(doc: DiscoveryDocument, token: string): Promise<Record<string, unknown>> {
    if (!doc.userinfo_endpoint) throw new OidcRejection('an opaque token and the provider has no userinfo_endpoint');
    const { status, json } = await getJson(doc.userinfo_endpoint, {
      config: this.config(),
      maxBytes: MAX_USERINFO_BYTES,
      // The token is sent to the userinfo endpoint only: a redirect (which would carry it elsewhere) is not followed.
      maxRedirects: 0,
      headers: { authorization: `Bearer ${token}` },
    });
    if (status >= 500) throw new OidcUnavailable(`userinfo answered ${status}`);
    if (status !== 200) throw new OidcRejection(`userinfo refused the token (${status})`);
    if (!json || typeof json.sub !== 'string') throw new OidcRejection('userinfo answered no JSON object with a sub');
    return json;
  }
}

function rejection(err: unknown): OidcRejection {
  const e = err as Error & { code?: string };
  return new OidcRejection(`${e.code ?? e.name}: ${e.message}`);
}

/** The longest lifetime we accept of a provider's token (exp after now, and exp after iat): 24 hours. */
export const MAX_PROVIDER_TOKEN_LIFETIME_SECONDS = 86_400;

/**
 * `aud` must contain our client id; `azp`, when present, must be it too (OIDC Core 3.1.3.7). A token
 * addressed to another client is refused even when its `azp` names us.
 */
export function checkAudience(payload: JWTPayload, clientId: string) {
  const aud = payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!aud.includes(clientId)) throw new OidcRejection('the token is for another audience (aud does not contain the client_id)');
  if (payload.azp !== undefined && payload.azp !== clientId) throw new OidcRejection('the token was issued to another party (azp is not the client_id)');
}

/** A token that would stay valid for longer than the bound (a year-9999 `exp`) is refused. */
export function checkLifetime(payload: JWTPayload, nowMs: number, skewSeconds: number) {
  const exp = payload.exp!; // required by jwtVerify
  const now = Math.floor(nowMs / 1000);
  if (exp - now > MAX_PROVIDER_TOKEN_LIFETIME_SECONDS + skewSeconds) throw new OidcRejection(`exp is more than ${MAX_PROVIDER_TOKEN_LIFETIME_SECONDS} s ahead`);
  if (typeof payload.iat === 'number' && exp - payload.iat > MAX_PROVIDER_TOKEN_LIFETIME_SECONDS) {
    throw new OidcRejection(`the token lives longer than ${MAX_PROVIDER_TOKEN_LIFETIME_SECONDS} s (exp - iat)`);
  }
}

/**
 * When users are named by `email`, only an address the provider vouches for names them: the claims must
 * say `email_verified: true` (or the string "true", as some providers send it). False, absent or
 * anything else is refused: a provider that lets users edit their email without verifying it would
 * otherwise let anyone log in as anyone (docs/sso.md).
 */
export function checkEmailVerified(claims: Record<string, unknown>, userIdClaim: string) {
  if (userIdClaim !== 'email') return;
  const v = Object.hasOwn(claims, 'email_verified') ? claims.email_verified : undefined;
  if (v !== true && v !== 'true') throw new OidcRejection(`the email is not verified by the provider (email_verified: ${v === undefined ? 'absent' : JSON.stringify(v).slice(0, 20)})`);
}
