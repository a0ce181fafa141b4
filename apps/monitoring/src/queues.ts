import { createQueue, createQueueConnection } from '@platform/queue';
import type { DeliveryJob } from './ingest/job';

/**
 * The producer side of the delivery queue. Its connection fails fast (no offline queue, a command
 * timeout) so that when Redis is down the webhook URL answers 503 at once instead of hanging.
 */
export function createDeliveryQueue(url: string, name: string, prefix?: string) {
  const connection = createQueueConnection(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 5000 });
  connection.on('error', () => {});
  const queue = createQueue<DeliveryJob>(name, { connection, prefix });
  queue.on('error', () => {});
  return { queue, connection, ready: () => connection.status === 'ready' };
}
