import Redis from 'ioredis';
import { createQueue, createQueueConnection } from '@platform/queue';
import type { QueuedDeliveries } from './ingest/job';

/**
 * The producer side of the delivery queue. Its connection fails fast — no offline queue, a command
 * in flight when the connection drops fails at once and is not sent again after the reconnect — so
 * that when Redis is down the webhook URL answers 503 at once instead of hanging; it reconnects
 * every few hundred milliseconds, forever, so ingestion resumes soon after Redis is back.
 */
export function createDeliveryQueue(url: string, name: string, prefix?: string) {
  const connection = createQueueConnection(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: 5000,
    retryStrategy: (times) => Math.min(100 * times, 500),
  });
  connection.on('error', () => {});
  const queue = createQueue<QueuedDeliveries>(name, { connection, prefix });
  queue.on('error', () => {});
  return { queue, connection, ready: () => connection.status === 'ready' };
}

/** The connection the project directory is read through: fails fast too (webhook create answers 503). */
export function createDirectoryRedis(url: string) {
  return new Redis(url, { maxRetriesPerRequest: 3, enableOfflineQueue: false });
}
