import type { ReadRouter } from '@platform/db';
import type Redis from 'ioredis';
import type { Pool } from 'pg';
import type { Logger } from '@platform/core';
import type { TokenVerifier } from '@platform/auth';
import type { Queue } from '@platform/queue';
import type { PrismaClient } from './generated/prisma/client';
import type { MonitoringConfig } from './config';
import type { QueuedDeliveries } from './ingest/job';
import type { WebhookCopy } from './ingest/webhook-copy';
import type { RemotePlugins } from './plugins/remote';

/** Everything monitoring's operations need, made once by main.ts (or a test) and handed to createApp. */
export interface MonitoringDeps {
  config: MonitoringConfig;
  logger: Logger;
  pool: Pool;
  /** Where reads (list, get, stat) go: the read replica when DATABASE_READ_URL is set and fresh enough. */
  reads: ReadRouter;
  prisma: PrismaClient;
  /** Reads identity's project directory (webhook create checks its project_id there). */
  redis: Redis;
  /** Prefix of the directory keys (tests isolate themselves with it). */
  redisPrefix: string;
  verifier: TokenVerifier;
  /** The queue of accepted webhook deliveries (its connection fails fast when Redis is down). */
  queue: Queue<QueuedDeliveries>;
  /** Whether the queue's Redis connection is up (the webhook URL answers 503 at once when it is not). */
  queueReady: () => boolean;
  /** The webhooks' copy in Redis (on `redis`): the webhook URL reads it while PostgreSQL is down. Started by main. */
  webhookCopy: WebhookCopy;
  /**
   * Published plugins (the plugin module's endpoints and the gRPC clients): a published version serves
   * its id, built-in or not. Absent: only the built-ins (tests that do not need plugins).
   */
  plugins?: RemotePlugins;
}
