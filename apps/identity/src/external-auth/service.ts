import type { AuthContext } from '@platform/auth';
import { isoOrEmpty } from '@platform/core';
import { errors } from '@platform/errors';
import { isOutboundRefused, OutboundRefused } from '@platform/net';
import type { IdentityDeps } from '../deps';
import { Prisma } from '../generated/prisma/client';
import { fetchDiscovery, isSecureOrListed, OidcMisconfigured, OidcUnavailable, type DiscoveryDocument, type OidcSettings } from './oidc';
import { sealExternalAuthSecret } from './secret';

/** The one external auth plugin there is: OpenID Connect, built into identity. */
export const OIDC_PLUGIN_ID = 'plugin-oidc-identity-auth';

export interface SetInput {
  plugin_info: {
    plugin_id: string;
    version?: string;
    upgrade_mode?: 'AUTO' | 'MANUAL' | 'NONE';
    options: { issuer: string; client_id: string; user_id_claim: string };
    secret_data?: { client_secret?: string };
    schema_id?: string;
  };
}

interface ExternalAuthRow {
  domain_id: string;
  state: string;
  plugin_id: string;
  version: string;
  upgrade_mode: string;
  options: unknown;
  metadata: unknown;
  updated_at: Date;
}

function toInfo(r: ExternalAuthRow) {
  const options = r.options as OidcSettings;
  return {
    domain_id: r.domain_id,
    state: r.state as 'ENABLED' | 'DISABLED',
    plugin_info: {
      plugin_id: r.plugin_id,
      version: r.version,
      upgrade_mode: r.upgrade_mode as 'AUTO' | 'MANUAL' | 'NONE',
      options: { issuer: options.issuer, client_id: options.client_id, user_id_claim: options.user_id_claim },
      metadata: (r.metadata ?? {}) as Record<string, unknown>,
      secret_id: '',
      schema_id: '',
    },
    updated_at: isoOrEmpty(r.updated_at),
  };
}

/** What a client needs to send users to the provider (upstream's `metadata`, filled by the plugin's init). */
function metadataOf(doc: DiscoveryDocument, clientId: string): Record<string, string> {
  const m: Record<string, string> = { protocol: 'oidc', issuer: doc.issuer, client_id: clientId, jwks_uri: doc.jwks_uri };
  for (const key of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'end_session_endpoint'] as const) {
    if (doc[key]) m[key] = doc[key];
  }
  return m;
}

export class ExternalAuthService {
  constructor(private readonly deps: IdentityDeps) {}

  /**
   * Sets (replaces) the caller's domain's external auth. Like upstream's plugin init, the provider is
   * asked for its discovery document first, so a wrong issuer is refused here rather than at every login.
   * Whatever went wrong (a refused address, a closed port, a 403, a 404, a timeout, a document naming
   * another issuer) the caller reads the one uniform refusal; what happened goes to the log, so the
   * platform's requests to the issuer are no oracle of the network behind it.
   */
  async set(auth: AuthContext, input: SetInput) {
    const { plugin_info: p } = input;
    if (p.plugin_id !== OIDC_PLUGIN_ID) {
      throw errors.invalidParameter('plugin_info.plugin_id', `the only external auth plugin is ${OIDC_PLUGIN_ID}`);
    }
    if (!isSecureOrListed(p.options.issuer, this.deps.config.externalAuth.outbound)) {
      throw errors.invalidParameter('plugin_info.options.issuer', 'must be an https URL (http only for a host on the OUTBOUND_ALLOW_PRIVATE list)');
    }
    let doc: DiscoveryDocument;
    try {
      doc = await fetchDiscovery(p.options.issuer, this.deps.config.externalAuth);
    } catch (e) {
      // The issuer is what the caller gave: one that cannot be used is refused as a parameter (not a
      // 503), whether it is mistyped, refused or down for now.
      if (e instanceof OidcMisconfigured || e instanceof OidcUnavailable) throw new OutboundRefused('plugin_info.options.issuer', e.message);
      if (isOutboundRefused(e)) throw new OutboundRefused('plugin_info.options.issuer', e.detail);
      throw e;
    }
    const secret = p.secret_data?.client_secret ? { client_secret: p.secret_data.client_secret } : undefined;
    const data = {
      state: 'ENABLED',
      plugin_id: p.plugin_id,
      version: p.version ?? '',
      upgrade_mode: p.upgrade_mode && p.upgrade_mode !== 'NONE' ? p.upgrade_mode : 'AUTO',
      options: { issuer: p.options.issuer, client_id: p.options.client_id, user_id_claim: p.options.user_id_claim },
      metadata: metadataOf(doc, p.options.client_id),
      // Set replaces the whole configuration: no secret_data given, none kept.
      secret_data: secret ? (sealExternalAuthSecret(this.deps.config.secretKeys, auth.domainId, secret) as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
      updated_at: new Date(),
    };
    const row = await this.deps.prisma.externalAuth.upsert({
      where: { domain_id: auth.domainId },
      create: { domain_id: auth.domainId, ...data },
      update: data,
    });
    return toInfo(row);
  }

  /** Removes the caller's domain's external auth (upstream: ERROR_NOT_FOUND when none is set). */
  async unset(auth: AuthContext) {
    const { count } = await this.deps.prisma.externalAuth.deleteMany({ where: { domain_id: auth.domainId } });
    if (!count) throw errors.notFound('domain_id', auth.domainId);
    return { domain_id: auth.domainId, state: 'DISABLED' as const, updated_at: '' };
  }

  /** The caller's domain's external auth; upstream answers state DISABLED (not a 404) when none is set. */
  async get(auth: AuthContext) {
    const row = await this.deps.prisma.externalAuth.findUnique({ where: { domain_id: auth.domainId } });
    return row ? toInfo(row) : { domain_id: auth.domainId, state: 'DISABLED' as const, updated_at: '' };
  }
}

/** The OIDC settings of a domain whose external auth is ENABLED, for token/issue; undefined when none. */
export async function externalAuthSettings(deps: IdentityDeps, domainId: string): Promise<OidcSettings | undefined> {
  const row = await deps.prisma.externalAuth.findUnique({ where: { domain_id: domainId }, select: { state: true, plugin_id: true, options: true } });
  if (!row || row.state !== 'ENABLED' || row.plugin_id !== OIDC_PLUGIN_ID) return undefined;
  const o = row.options as Partial<OidcSettings>;
  if (typeof o.issuer !== 'string' || typeof o.client_id !== 'string' || typeof o.user_id_claim !== 'string') return undefined;
  return { issuer: o.issuer, client_id: o.client_id, user_id_claim: o.user_id_claim };
}
