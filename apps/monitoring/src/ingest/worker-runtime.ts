import type { Pool } from 'pg';
import type IORedis from 'ioredis';
import type { Logger } from '@platform/core';
import { createWorker, type Worker } from '@platform/queue';
import type { MonitoringConfig } from '../config';
import { webhookPlugins } from '../plugins/webhook';
import { Batcher } from './batcher';
import type { DeliveryJob } from './job';
import { prepareDelivery, type PreparedDelivery } from './prepare';
import { storeDeliveries } from './store';

/**
 * The BullMQ worker of webhook deliveries: each job is parsed with its webhook's plugin, then
 * written through a batcher (many jobs per transaction). A job completes only once its delivery is
 * committed; a job re-run after a crash or a stall finds its delivery stored and does nothing.
 */
export function startDeliveryWorker(o: { config: MonitoringConfig; pool: Pool; connection: IORedis; prefix?: string; logger: Logger }): Worker<DeliveryJob> {
  const registry = webhookPlugins();
  const ctx = { allowPrivateUrls: o.config.allowPrivateUrls, snsConfirmHosts: o.config.snsConfirmHosts };
  const batcher = new Batcher<PreparedDelivery>((items) => storeDeliveries(o.pool, items, o.config.ingest.sameEventSeconds), o.config.worker.batchSize, 5);
  const worker = createWorker<DeliveryJob>(
    o.config.ingest.queue,
    async (job) => {
      const prepared = await prepareDelivery(registry, job.data, ctx);
      if (prepared.outcome === 'PARSE_ERROR') o.logger.warn({ delivery_id: job.data.delivery_id, webhook_id: job.data.webhook.webhook_id, err: prepared.error }, 'payload not parsed');
      await batcher.submit(prepared);
    },
    { connection: o.connection, prefix: o.prefix },
    {
      concurrency: o.config.worker.concurrency,
      lockDuration: o.config.worker.lockDurationMs,
      stalledInterval: o.config.worker.stalledIntervalMs,
    },
  );
  worker.on('failed', (job, err) => o.logger.error({ delivery_id: job?.id, attempts: job?.attemptsMade, err: err.message }, 'delivery job failed'));
  worker.on('error', (err) => o.logger.error({ err: err.message }, 'worker error'));
  return worker;
}
