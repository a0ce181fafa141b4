import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { ReadRouter } from '@platform/db';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { DirectoryClient } from '@platform/directory';
import type { PrismaClient } from './generated/prisma/client';
import type { InventoryConfig } from './config';

/** Everything inventory's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface InventoryDeps {
  config: InventoryConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat, analyze, export) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  redis: Redis;
  /** Projects and project groups as identity publishes them (checks project_id, resolves project_group_id). */
  directory: DirectoryClient;
  verifier: TokenVerifier;
}
