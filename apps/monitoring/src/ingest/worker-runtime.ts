import type { Pool } from 'pg';
import type IORedis from 'ioredis';
import type { Logger } from '@platform/core';
import { postgresCheck } from '@platform/db';
import { createWorker, type Worker } from '@platform/queue';
import { injectTrace as injectCurrent, tracingEnabled, withSpan } from '@platform/telemetry';
import type { MonitoringConfig } from '../config';
import { webhookPlugins } from '../plugins/webhook';
import { Batcher } from './batcher';
import { deliveriesOf, type DeliveryJob, type QueuedDeliveries } from './job';
import { prepareDelivery, type PreparedDelivery } from './prepare';
import { storeDeliveries } from './store';

/**
 * The BullMQ worker of webhook deliveries: each delivery of a job is parsed with its webhook's
 * plugin, then written through a batcher (the deliveries of many jobs per transaction). A job
 * completes only once all its deliveries are committed; a job re-run after a crash or a stall finds
 * its deliveries stored and does nothing (nor for a delivery the app refused: see markNotAccepted).
 */
export function startDeliveryWorker(o: { config: MonitoringConfig; pool: Pool; connection: IORedis; prefix?: string; logger: Logger }): Worker<QueuedDeliveries> {
  const registry = webhookPlugins();
  const ctx = { outbound: o.config.outbound, snsConfirmHosts: o.config.snsConfirmHosts };
  const batcher = new Batcher<PreparedDelivery>(
    async (items) => {
      await storeDeliveries(o.pool, items, o.config.ingest.sameEventSeconds);
    },
    // Two transactions at a time by default: while one waits on its round trips and its commit's
    // flush, Postgres works on the next (their alerts are serialized by key; see storeDeliveries).
    { maxSize: o.config.worker.batchSize, maxWaitMs: 5, maxInFlight: Math.max(1, o.config.worker.storeTransactions), retrySingly: true },
  );
  const storeOne = async (delivery: DeliveryJob) => {
    const prepared = await prepareDelivery(registry, delivery, ctx);
    if (prepared.outcome === 'PARSE_ERROR') o.logger.warn({ delivery_id: delivery.delivery_id, webhook_id: delivery.webhook.webhook_id, err: prepared.error, ...(prepared.detail && { outbound: prepared.detail }) }, 'payload not parsed');
    await batcher.submit(prepared);
  };
  // While tracing is on, each delivery is stored in a span of the trace of the request that accepted it,
  // linked to the job's span. Its transaction runs in the span of the batch's first delivery.
  const store = tracingEnabled()
    ? (delivery: DeliveryJob) =>
        withSpan(
          'webhook delivery store',
          { kind: 'consumer', parent: delivery.trace, links: [injectCurrent()], attributes: { 'monitoring.delivery_id': delivery.delivery_id, 'monitoring.webhook_id': delivery.webhook.webhook_id } },
          () => storeOne(delivery),
        )
    : storeOne;
  const worker = createWorker<QueuedDeliveries>(
    o.config.ingest.queue,
    async (job) => {
      const results = await Promise.allSettled(deliveriesOf(job.name, job.data).map(store));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
    // A delivery that fails because Postgres is down goes back to the queue without spending an
    // attempt: an outage of any length fails no accepted delivery.
    { connection: o.connection, prefix: o.prefix, logger: o.logger, dependencies: postgresCheck(o.pool) },
    {
      concurrency: o.config.worker.concurrency,
      lockDuration: o.config.worker.lockDurationMs,
      stalledInterval: o.config.worker.stalledIntervalMs,
    },
  );
  worker.on('failed', (job, err) =>
    o.logger.error({ job_id: job?.id, delivery_ids: job ? deliveriesOf(job.name, job.data).map((d) => d.delivery_id) : [], attempts: job?.attemptsMade, err: err.message }, 'delivery job failed'),
  );
  return worker;
}
