import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { ReadRouter } from '@platform/db';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { DirectoryClient } from '@platform/directory';
import type { Queue } from '@platform/queue';
import type { PrismaClient } from './generated/prisma/client';
import type { CostAnalysisConfig } from './config';
import type { CollectTaskData } from './collector/queue';
import type { PluginRegistry } from './plugin/registry';

/** The time source of the data source schedule (tests control it). */
export type Clock = () => Date;

/** Everything cost-analysis needs, made once by main.ts / worker.ts (or a test). */
export interface CostAnalysisDeps {
  config: CostAnalysisConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat, analyze) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  /** General Redis connection (readiness, project directory). */
  redis: Redis;
  directory: DirectoryClient;
  /** The collection queue: one BullMQ job per job task. */
  queue: Queue<CollectTaskData>;
  plugins: PluginRegistry;
  verifier: TokenVerifier;
  /** "Now" for schedules: next_sync_at and the scheduler's ticks. */
  clock: Clock;
}
