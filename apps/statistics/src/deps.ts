import type { ReadRouter } from '@platform/db';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { PrismaClient } from './generated/prisma/client';
import type { StatisticsConfig } from './config';
import type { PluginRegistry } from './plugin/registry';
import type { SecretBox } from '@platform/secrets';

/** Everything statistics' operations need, made once by main.ts (or a test) and handed to createApp. */
export interface StatisticsDeps {
  config: StatisticsConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  verifier: TokenVerifier;
  plugins: PluginRegistry;
  secrets: SecretBox;
}
