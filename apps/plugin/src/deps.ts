import type { ReadRouter } from '@platform/db';
import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { EndpointChanges } from '@platform/plugin';
import type { PrismaClient } from './generated/prisma/client';
import type { PluginConfig } from './config';

/** Everything the plugin module's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface PluginDeps {
  config: PluginConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  redis: Redis;
  verifier: TokenVerifier;
  /** Tells every replica of every module that endpoints changed (their resolvers drop those entries). */
  changes: EndpointChanges;
}
