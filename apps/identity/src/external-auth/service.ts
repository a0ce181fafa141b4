import { z } from 'zod';
import type { AuthContext } from '@platform/auth';
import { errors, pluginErrors, zodIssuesToApiError } from '@platform/errors';
import { isOutboundRefused, OutboundRefused } from '@platform/net';
import type { IdentityDeps } from '../deps';
import { fetchDiscovery, isSecureOrListed, OidcMisconfigured, OidcUnavailable, type DiscoveryDocument, type OidcSettings } from './oidc';
import { chooseAuthPlugin, upgradeModeOf } from './plugins';
import { ExternalAuthRepository, type DomainExternalAuth } from './repository';
import { asObject, toExternalAuthInfo } from './responses';
import { sealExternalAuthSecret } from './secret';

export { OIDC_PLUGIN_ID } from './plugins';

export interface SetInput {
  plugin_info: {
    plugin_id: string;
    version?: string;
    upgrade_mode?: 'AUTO' | 'MANUAL' | 'NONE';
    options: Record<string, unknown>;
    secret_data?: Record<string, unknown>;
    schema_id?: string;
  };
}

/** Names a claim may not have: they would read an object's prototype, not a claim. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isIssuerUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.search && !u.hash;
  } catch {
    return false;
  }
}

/** The built-in OIDC plugin's options: checked here, since `options` is a free Struct for every other plugin. */
export const oidcOptions = z.strictObject({
  issuer: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .refine(isIssuerUrl, 'must be an http(s) URL without credentials, query or fragment'),
  client_id: z.string().trim().min(1).max(255),
  user_id_claim: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_.:-]+$/, 'must be a claim name (letters, digits, _ . : -)')
    .refine((k) => !RESERVED_KEYS.has(k), 'is not a claim name')
    .default('email'),
});
const oidcSecret = z.strictObject({ client_secret: z.string().max(4096).optional() });

/** At most this much metadata (as JSON) is kept from a plugin's init. */
const MAX_METADATA_BYTES = 64 * 1024;


/** What a client needs to send users to the provider (upstream's `metadata`, filled by the plugin's init). */
function metadataOf(doc: DiscoveryDocument, clientId: string): Record<string, string> {
  const m: Record<string, string> = { protocol: 'oidc', issuer: doc.issuer, client_id: clientId, jwks_uri: doc.jwks_uri };
  for (const key of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'end_session_endpoint'] as const) {
    if (doc[key]) m[key] = doc[key];
  }
  return m;
}

interface Configured {
  version: string;
  options: Record<string, unknown>;
  metadata: Record<string, unknown>;
  secret?: Record<string, unknown>;
}

export class ExternalAuthService {
  private readonly configs: ExternalAuthRepository;

  constructor(private readonly deps: IdentityDeps) {
    this.configs = new ExternalAuthRepository(deps.prisma);
  }

  /**
   * Sets (replaces) the caller's domain's external auth. The plugin is chosen as everywhere
   * (docs/decisions/plugins.md): a version published under `plugin_id` for the domain wins, the
   * built-in OIDC serves its id only while nothing is published under it. A published plugin is asked
   * `ExternalAuth.init(options, domain_id)` as upstream does, and its `metadata` kept and answered; its
   * `options` and `secret_data` are free Structs (upstream's), secret_data sealed and never answered.
   */
  async set(auth: AuthContext, input: SetInput) {
    const { plugin_info: p } = input;
    const choice = await chooseAuthPlugin(this.deps.plugins, { domainId: auth.domainId, pluginId: p.plugin_id, version: p.version, upgradeMode: p.upgrade_mode });
    let configured: Configured;
    if (choice.kind === 'builtin') configured = await this.configureOidc(p);
    else {
      const client = this.deps.plugins!.clients.identity(choice.endpoint, p.plugin_id);
      const answer = await client.externalAuth.init({ options: p.options, domain_id: auth.domainId });
      if (Buffer.byteLength(JSON.stringify(answer.metadata), 'utf8') > MAX_METADATA_BYTES) {
        throw pluginErrors.invalidResponse(`ExternalAuth.init: the plugin's metadata is larger than ${MAX_METADATA_BYTES} bytes`);
      }
      configured = {
        // upstream keeps the version the plugin module answered (the newest one with AUTO).
        version: choice.updated_version,
        options: p.options,
        metadata: answer.metadata,
        secret: p.secret_data && Object.keys(p.secret_data).length ? p.secret_data : undefined,
      };
    }
    const row = await this.configs.save({
      domain_id: auth.domainId,
      state: 'ENABLED',
      plugin_id: p.plugin_id,
      version: configured.version,
      upgrade_mode: upgradeModeOf(p.upgrade_mode),
      options: configured.options,
      metadata: configured.metadata,
      // Set replaces the whole configuration: no secret_data given, none kept.
      secret_data: configured.secret ? sealExternalAuthSecret(this.deps.config.secretKeys, auth.domainId, configured.secret) : undefined,
      schema_id: p.schema_id ?? '',
    });
    return toExternalAuthInfo(row);
  }

  /**
   * The built-in OIDC: its own options checked, and, like upstream's plugin init, the provider asked
   * for its discovery document, so a wrong issuer is refused here rather than at every login. Whatever
   * went wrong (a refused address, a closed port, a 403, a 404, a timeout, a document naming another
   * issuer) the caller reads the one uniform refusal; what happened goes to the log, so the platform's
   * requests to the issuer are no oracle of the network behind it.
   */
  private async configureOidc(p: SetInput['plugin_info']): Promise<Configured> {
    const parsed = oidcOptions.safeParse(p.options);
    if (!parsed.success) throw zodIssuesToApiError(parsed.error, p.options, 'plugin_info.options');
    const secretParsed = oidcSecret.safeParse(p.secret_data ?? {});
    if (!secretParsed.success) throw zodIssuesToApiError(secretParsed.error, p.secret_data, 'plugin_info.secret_data');
    const options = parsed.data;
    if (!isSecureOrListed(options.issuer, this.deps.config.externalAuth.outbound)) {
      throw errors.invalidParameter('plugin_info.options.issuer', 'must be an https URL (http only for a host on the OUTBOUND_ALLOW_PRIVATE list)');
    }
    let doc: DiscoveryDocument;
    try {
      doc = await fetchDiscovery(options.issuer, this.deps.config.externalAuth);
    } catch (e) {
      // The issuer is what the caller gave: one that cannot be used is refused as a parameter (not a
      // 503), whether it is mistyped, refused or down for now.
      if (e instanceof OidcMisconfigured || e instanceof OidcUnavailable) throw new OutboundRefused('plugin_info.options.issuer', e.message);
      if (isOutboundRefused(e)) throw new OutboundRefused('plugin_info.options.issuer', e.detail);
      throw e;
    }
    const secret = secretParsed.data.client_secret ? { client_secret: secretParsed.data.client_secret } : undefined;
    return { version: p.version ?? '', options, metadata: metadataOf(doc, options.client_id), secret };
  }

  /** Removes the caller's domain's external auth (upstream: ERROR_NOT_FOUND when none is set). */
  async unset(auth: AuthContext) {
    if (!(await this.configs.delete(auth.domainId))) throw errors.notFound('domain_id', auth.domainId);
    return { domain_id: auth.domainId, state: 'DISABLED' as const, updated_at: '' };
  }

  /** The caller's domain's external auth; upstream answers state DISABLED (not a 404) when none is set. */
  async get(auth: AuthContext) {
    const row = await this.configs.find(auth.domainId);
    return row ? toExternalAuthInfo(row) : { domain_id: auth.domainId, state: 'DISABLED' as const, updated_at: '' };
  }
}

/** The domain's external auth when it is ENABLED; undefined when none is set. */
export async function enabledExternalAuth(deps: IdentityDeps, domainId: string): Promise<DomainExternalAuth | undefined> {
  const row = await new ExternalAuthRepository(deps.prisma).find(domainId);
  if (!row || row.state !== 'ENABLED') return undefined;
  return { ...row, options: asObject(row.options), metadata: asObject(row.metadata) };
}

/** The built-in OIDC's settings from a stored configuration; undefined when they are not usable. */
export function oidcSettingsOf(options: Record<string, unknown>): OidcSettings | undefined {
  const o = options as Partial<OidcSettings>;
  if (typeof o.issuer !== 'string' || typeof o.client_id !== 'string' || typeof o.user_id_claim !== 'string') return undefined;
  return { issuer: o.issuer, client_id: o.client_id, user_id_claim: o.user_id_claim };
}
