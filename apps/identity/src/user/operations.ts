import { z } from 'zod';
import { Empty, id, idOperation, NOT_FOUND, operation, plainText, QUERY_ERRORS, request, statOperation, tags } from '@platform/http';
import { QuerySchema } from '@platform/query';
import type { RoleType } from '@platform/auth';
import { errors } from '@platform/errors';
import type { UserService } from './service';
import { UserInfo, UsersInfo } from './responses';

// Upstream: every user operation is DOMAIN_ADMIN's (a domain-scoped token).
const write = { permission: 'identity:User.write', roles: ['DOMAIN_ADMIN'] as RoleType[] };
const read = { permission: 'identity:User.read', roles: ['DOMAIN_ADMIN'] as RoleType[] };

const userId = id.describe('The user.');
const password = z.string().min(1).max(1024).describe('A LOCAL user\'s password: 8 to 128 characters. Never answered or logged.');
const fields = {
  name: plainText(255).optional().describe('Display name (no control or bidirectional-override characters).'),
  email: z.string().max(255).optional().describe('Contact address: a free string, as upstream\'s (not checked for form).'),
  language: z.string().min(2).max(16).optional().describe('Preferred language (e.g. en, ko).'),
  timezone: z.string().min(1).max(64).optional().describe('Preferred IANA time zone (e.g. UTC, Asia/Seoul).'),
  tags: tags.optional().describe('Free-form labels.'),
  reset_password: z.boolean().optional().describe('Upstream mails a temporary password; no mail is sent here, so only false is accepted.'),
  enforce_mfa_state: z
    .string()
    .max(32)
    .optional()
    .describe('Upstream\'s enforced MFA, a free string: ENABLED is refused (MFA is turned on with the admin CLI here); any other value, as upstream reads it, does not enforce MFA.'),
  enforce_mfa_type: z.string().max(32).optional().describe('Upstream\'s enforced MFA type; not accepted here (see enforce_mfa_state).'),
};

/** What upstream clients may send that this platform cannot do: refused with a clear 400 rather than ignored. */
function refuseUnsupported(input: { reset_password?: boolean; enforce_mfa_state?: string; enforce_mfa_type?: string }) {
  if (input.reset_password) throw errors.invalidParameter('reset_password', 'no mail is sent by this platform: set a password instead');
  if (input.enforce_mfa_state === 'ENABLED') throw errors.invalidParameter('enforce_mfa_state', 'MFA is enabled per user with the admin CLI (user mfa-enable)');
  if (input.enforce_mfa_type) throw errors.invalidParameter('enforce_mfa_type', 'MFA is enabled per user with the admin CLI (user mfa-enable)');
}

export function userOperations(service: UserService) {
  return [
    operation({
      path: '/identity/v2/user/create',
      access: write,
      summary: 'Create a user of the caller\'s domain: LOCAL with a password, or EXTERNAL (single sign-on) with none',
      schema: request({
        user_id: userId.describe('The id they log in with (letters, digits, . _ @ -; e.g. their email). For EXTERNAL users, the value of the provider\'s user_id_claim.'),
        password: password.optional(),
        auth_type: z.enum(['LOCAL', 'EXTERNAL']).optional().describe('LOCAL (default) or EXTERNAL.'),
        ...fields,
      }),
      response: UserInfo,
      errors: { 409: ['ERROR_ALREADY_EXISTS'], 404: ['ERROR_NOT_FOUND'] },
      handler: (input, { auth }) => {
        refuseUnsupported(input);
        return service.create(auth, input);
      },
    }),
    operation({
      path: '/identity/v2/user/update',
      access: write,
      summary: 'Change a user\'s profile or (LOCAL users) password; a new password ends their sessions',
      schema: request({ user_id: userId, password: password.optional(), ...fields }),
      response: UserInfo,
      errors: { ...NOT_FOUND, 400: ['ERROR_UNABLE_TO_RESET_PASSWORD_IN_EXTERNAL_AUTH'] },
      handler: (input, { auth }) => {
        refuseUnsupported(input);
        return service.update(auth, input);
      },
    }),
    idOperation({
      path: '/identity/v2/user/delete',
      access: write,
      summary: 'Delete a user with their role bindings and project memberships; their tokens stop working at once',
      id: { user_id: userId },
      response: Empty,
      errors: { ...NOT_FOUND, 400: ['ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED'] },
      call: (auth, user) => service.delete(auth, user),
    }),
    idOperation({
      path: '/identity/v2/user/enable',
      access: write,
      summary: 'Enable a user: they can log in again',
      id: { user_id: userId },
      response: UserInfo,
      call: (auth, user) => service.enable(auth, user),
    }),
    idOperation({
      path: '/identity/v2/user/disable',
      access: write,
      summary: 'Disable a user: no login, and their access and refresh tokens stop working at once',
      id: { user_id: userId },
      response: UserInfo,
      errors: { ...NOT_FOUND, 400: ['ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED'] },
      call: (auth, user) => service.disable(auth, user),
    }),
    idOperation({
      path: '/identity/v2/user/get',
      access: read,
      summary: 'One user of the caller\'s domain',
      id: { user_id: userId },
      response: UserInfo,
      call: (auth, user) => service.get(auth, user),
    }),
    operation({
      path: '/identity/v2/user/list',
      access: read,
      summary: 'The users of the caller\'s domain, filtered by a query and by the fields given',
      schema: request({
        query: QuerySchema.optional().describe('Filter, sort, page, keyword, only.'),
        user_id: z.string().max(255).optional().describe('Only this user.'),
        name: z.string().max(255).optional().describe('Only users with this name.'),
        state: z.enum(['ENABLED', 'DISABLED', 'PENDING']).optional().describe('Only users in this state (PENDING: none, invitations are not modelled).'),
        email: z.string().max(255).optional().describe('Only users with this address.'),
        auth_type: z.enum(['LOCAL', 'EXTERNAL']).optional().describe('Only LOCAL or only EXTERNAL users.'),
      }),
      response: UsersInfo,
      errors: QUERY_ERRORS,
      handler: (input, { auth }) => service.list(auth, input),
    }),
    statOperation('/identity/v2/user/stat', read, service),
  ];
}
