import type Redis from 'ioredis';
import type { Pool } from 'pg';
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
  prisma: PrismaClient;
  redis: Redis;
  /** Projects and project groups as identity publishes them (checks project_id, resolves project_group_id). */
  directory: DirectoryClient;
  verifier: TokenVerifier;
}
