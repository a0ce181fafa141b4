import { z } from 'zod';
import { isoOrEmpty } from '@platform/core';
import { listOf, structOut, timestamp } from '@platform/http';
import type { UserRow } from './repository';

export type AuthType = 'LOCAL' | 'EXTERNAL';

/** UserInfo (upstream identity v2). Never a password, a hash or an MFA secret. */
export const UserInfo = z
  .strictObject({
    user_id: z.string().describe('The user id, unique in the domain (what they log in with).'),
    name: z.string().describe('Display name.'),
    state: z.enum(['ENABLED', 'DISABLED']).describe('ENABLED, or DISABLED: they cannot log in and their tokens stop working.'),
    email: z.string().describe('Contact address.'),
    email_verified: z.boolean().describe('Whether the address was verified (always false: no mail is sent).'),
    auth_type: z.enum(['LOCAL', 'EXTERNAL']).describe('LOCAL: a password kept here; EXTERNAL: single sign-on through the domain\'s identity provider.'),
    role_type: z.enum(['DOMAIN_ADMIN', 'USER']).describe('DOMAIN_ADMIN when they hold that role binding, otherwise USER.'),
    role_id: z.string().describe('The DOMAIN_ADMIN role they hold, or empty.'),
    mfa: z
      .strictObject({
        state: z.enum(['ENABLED', 'DISABLED']).describe('Whether a TOTP code is asked at login.'),
        mfa_type: z.string().describe('OTP when enabled, otherwise empty.'),
        options: structOut.describe('MFA options, as upstream answers them: `enforce` (false: MFA is turned on per user with the admin CLI, never enforced by a domain policy); never a secret.'),
      })
      .describe('Multi-factor authentication (turned on with the admin CLI).'),
    language: z.string().describe('Preferred language (default en).'),
    timezone: z.string().describe('Preferred time zone (default UTC).'),
    required_actions: z.array(z.string()).describe('Actions asked of the user at next login (none are modelled).'),
    refresh_timeout: z.number().int().describe('Lifetime of their refresh tokens, in seconds.'),
    tags: structOut.describe('Free-form labels.'),
    domain_id: z.string().describe('The domain of the user.'),
    created_at: timestamp.describe('When the user was created.'),
    last_accessed_at: timestamp.describe('Last successful login (empty if never).'),
  })
  .meta({ id: 'UserInfo' });

export const UsersInfo = listOf(UserInfo).meta({ id: 'UsersInfo' });

/** A stored row as UserInfo: role_type DOMAIN_ADMIN with the role of that binding, else USER (never the password hash or the MFA secret). */
export function toUserInfo(u: UserRow, adminRoleId: string | undefined, refreshTimeout: number) {
  return {
    user_id: u.user_id,
    name: u.name,
    state: u.state as 'ENABLED' | 'DISABLED',
    email: u.email,
    email_verified: false,
    auth_type: u.auth_type as AuthType,
    role_type: adminRoleId ? ('DOMAIN_ADMIN' as const) : ('USER' as const),
    role_id: adminRoleId ?? '',
    mfa: u.mfa_enabled ? { state: 'ENABLED' as const, mfa_type: 'OTP', options: { enforce: false } } : { state: 'DISABLED' as const, mfa_type: '', options: {} },
    language: u.language,
    timezone: u.timezone,
    required_actions: [],
    refresh_timeout: refreshTimeout,
    tags: (u.tags ?? {}) as Record<string, unknown>,
    domain_id: u.domain_id,
    created_at: isoOrEmpty(u.created_at),
    last_accessed_at: isoOrEmpty(u.last_accessed_at),
  };
}
