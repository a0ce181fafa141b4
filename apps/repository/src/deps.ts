import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { PrismaClient } from './generated/prisma/client';
import type { RepositoryConfig } from './config';

/** Everything repository's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface RepositoryDeps {
  config: RepositoryConfig;
  logger: Logger;
  pool: Pool;
  prisma: PrismaClient;
  verifier: TokenVerifier;
}
