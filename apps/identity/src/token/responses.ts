import { z } from 'zod';
import { ROLE_TYPES } from '@platform/auth';

/** TokenInfo: the answer of token/issue. */
export const TokenInfo = z.strictObject({ access_token: z.string(), refresh_token: z.string() }).meta({ id: 'TokenInfo' });

/** GrantTokenInfo: the answer of token/grant (`workspace_id` is `''` outside a workspace scope). */
export const GrantTokenInfo = z
  .strictObject({ access_token: z.string(), role_type: z.enum(ROLE_TYPES), role_id: z.string(), domain_id: z.string(), workspace_id: z.string() })
  .meta({ id: 'GrantTokenInfo' });
