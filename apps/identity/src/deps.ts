import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { ReadRouter } from '@platform/db';
import type { Logger } from '@platform/core';
import type { TokenSigner, TokenVerifier } from '@platform/auth';
import type { PrismaClient } from './generated/prisma/client';
import type { IdentityConfig } from './config';
import type { IdentityPlugins } from './external-auth/plugins';

/** Everything identity's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface IdentityDeps {
  config: IdentityConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat, analyze, export) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  redis: Redis;
  /** Prefix of every Redis key identity writes (tests isolate themselves with it). */
  redisPrefix: string;
  signer: TokenSigner;
  verifier: TokenVerifier;
  /** External auth plugins (their endpoints and clients); absent: only the built-in OIDC. */
  plugins?: IdentityPlugins;
}
