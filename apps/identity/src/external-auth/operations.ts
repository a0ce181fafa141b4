import { z } from 'zod';
import type { RoleType } from '@platform/auth';
import { operation, request } from '@platform/http';
import type { ExternalAuthService } from './service';
import { ExternalAuthInfo } from './responses';

// upstream: set/unset need identity:ExternalAuth.write, get identity:ExternalAuth.read; DOMAIN_ADMIN only.
const write = { permission: 'identity:ExternalAuth.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'identity:ExternalAuth.read', roles: ['DOMAIN_ADMIN'] as RoleType[] };

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

const options = z
  .strictObject({
    issuer: z
      .string()
      .trim()
      .min(1)
      .max(2048)
      .refine(isIssuerUrl, 'must be an http(s) URL without credentials, query or fragment')
      .describe('The OpenID provider\'s issuer URL, exactly as its discovery document and tokens name it (e.g. https://sso.example.com/realms/acme); https unless its host is on OUTBOUND_ALLOW_PRIVATE.'),
    client_id: z.string().trim().min(1).max(255).describe('The client registered at the provider for this platform: tokens must name it in `aud` (or `azp`).'),
    user_id_claim: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .regex(/^[A-Za-z0-9_.:-]+$/, 'must be a claim name (letters, digits, _ . : -)')
      .refine((k) => !RESERVED_KEYS.has(k), 'is not a claim name')
      .default('email')
      .describe('The claim whose value is the platform user_id (default `email`; `sub` or `preferred_username` are common).'),
  })
  .describe('Options of the OIDC plugin.');

const pluginInfo = z
  .strictObject({
    plugin_id: z.string().trim().min(1).max(255).describe('The external auth plugin: only `plugin-oidc-identity-auth` (built in) exists.'),
    version: z.string().trim().max(64).optional().describe('The plugin version (informational: the plugin is built in).'),
    upgrade_mode: z.enum(['AUTO', 'MANUAL', 'NONE']).optional().describe('upstream\'s upgrade mode (informational: the plugin is built in).'),
    options,
    secret_data: z
      .strictObject({ client_secret: z.string().max(4096).optional().describe('The client\'s secret at the provider; kept sealed, never answered.') })
      .optional()
      .describe('Secrets of the plugin, sealed at rest and never answered.'),
    schema_id: z.string().max(255).optional().describe('upstream\'s schema of secret_data (ignored: the plugin has one fixed form).'),
  })
  .describe('The plugin to authenticate the domain\'s users with, and its options.');

export function externalAuthOperations(service: ExternalAuthService) {
  return [
    operation({
      path: '/identity/v2/external-auth/set',
      access: write,
      summary: 'Set (replace) the domain\'s external authentication: an OpenID Connect provider whose tokens log users in',
      schema: request({ plugin_info: pluginInfo }),
      response: ExternalAuthInfo,
      errors: { 400: ['ERROR_OUTBOUND_REFUSED'] },
      handler: (input, { auth }) => service.set(auth, input),
    }),
    operation({
      path: '/identity/v2/external-auth/unset',
      access: write,
      summary: 'Remove the domain\'s external authentication (its users can no longer log in with auth_type EXTERNAL)',
      schema: request({}),
      response: ExternalAuthInfo,
      errors: { 404: ['ERROR_NOT_FOUND'] },
      handler: (_input, { auth }) => service.unset(auth),
    }),
    operation({
      path: '/identity/v2/external-auth/get',
      access: read,
      summary: 'The domain\'s external authentication (state DISABLED when none is set)',
      schema: request({}),
      response: ExternalAuthInfo,
      handler: (_input, { auth }) => service.get(auth),
    }),
  ];
}
