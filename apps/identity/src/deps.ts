import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenSigner, TokenVerifier } from '@platform/auth';
import type { PrismaClient } from './generated/prisma/client';
import type { IdentityConfig } from './config';

/** Everything identity's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface IdentityDeps {
  config: IdentityConfig;
  logger: Logger;
  pool: Pool;
  prisma: PrismaClient;
  redis: Redis;
  /** Prefix of every Redis key identity writes (tests isolate themselves with it). */
  redisPrefix: string;
  signer: TokenSigner;
  verifier: TokenVerifier;
}
