import type IORedis from 'ioredis';
import { createProducerConnection, createQueue, createRedis, type ErrorLogger } from '@platform/queue';
import type { QueuedDeliveries } from './ingest/job';

/**
 * The producer side of the delivery queue. Its connection fails fast — no offline queue, a command
 * in flight when the connection drops fails at once and is not sent again after the reconnect — so
 * that when Redis is down the webhook URL answers 503 at once instead of hanging; it reconnects
 * every few hundred milliseconds, forever, so ingestion resumes soon after Redis is back. Its errors
 * (and the queue's) are logged when a logger is given, and never thrown at the process.
 */
export function createDeliveryQueue(url: string, name: string, prefix?: string, logger?: ErrorLogger) {
  const connection = createProducerConnection(url, {
    retryStrategy: (times) => Math.min(100 * times, 500),
    logger,
    label: 'delivery queue redis',
  });
  const queue = createQueue<QueuedDeliveries>(name, { connection, prefix, logger });
  return { queue, connection, ready: () => connection.status === 'ready' };
}

/** The connection the project directory is read through: fails fast too (webhook create answers 503). */
export function createDirectoryRedis(url: string, logger?: ErrorLogger): IORedis {
  return createRedis(url, { maxRetriesPerRequest: 3, logger });
}
