import type { ReadRouter } from '@platform/db';
import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { DirectoryClient } from '@platform/directory';
import type { PrismaClient } from './generated/prisma/client';
import type { OpsflowConfig } from './config';

/** Everything opsflow's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface OpsflowDeps {
  config: OpsflowConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  redis: Redis;
  verifier: TokenVerifier;
  /** Identity's project directory (Redis): checks a project and finds its workspace. */
  directory: DirectoryClient;
}
