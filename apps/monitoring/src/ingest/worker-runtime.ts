import type { Pool } from 'pg';
import type IORedis from 'ioredis';
import type { Logger } from '@platform/core';
import { postgresCheck } from '@platform/db';
import { createWorker, DelayedError, type Worker } from '@platform/queue';
import { injectTrace as injectCurrent, tracingEnabled, withSpan } from '@platform/telemetry';
import type { MonitoringConfig } from '../config';
import { webhookPlugins } from '../plugins/webhook';
import { Batcher } from './batcher';
import { deliveriesOf, type DeliveryJob, type QueuedDeliveries } from './job';
import { DeliveryParser, PluginUnavailable, prepareDelivery, type PreparedDelivery } from './prepare';
import type { RemotePlugins } from '../plugins/remote';

/** A job whose plugin does not answer waits 1 s, doubling to 10 s (half jittered), for at most a day after its first delivery arrived. */
const PLUGIN_WAIT_MAX_MS = 24 * 3600_000;
export function pluginWaitDelay(waits: number): number {
  const full = Math.min(1000 * 2 ** Math.min(waits, 10), 10_000);
  return Math.round(full / 2 + (Math.random() * full) / 2);
}
import { storeDeliveries } from './store';

/**
 * The BullMQ worker of webhook deliveries: each delivery of a job is parsed with its webhook's
 * plugin, then written through a batcher (the deliveries of many jobs per transaction). A job
 * completes only once all its deliveries are committed; a job re-run after a crash or a stall finds
 * its deliveries stored and does nothing (nor for a delivery the app refused: see markNotAccepted).
 */
export function startDeliveryWorker(o: { config: MonitoringConfig; pool: Pool; connection: IORedis; prefix?: string; logger: Logger; plugins?: RemotePlugins }): Worker<QueuedDeliveries> {
  const parser = new DeliveryParser(webhookPlugins(), { outbound: o.config.outbound, snsConfirmHosts: o.config.snsConfirmHosts }, o.plugins);
  const batcher = new Batcher<PreparedDelivery>(
    async (items) => {
      await storeDeliveries(o.pool, items, o.config.ingest.sameEventSeconds);
    },
    // Two transactions at a time by default: while one waits on its round trips and its commit's
    // flush, Postgres works on the next (their alerts are serialized by key; see storeDeliveries).
    { maxSize: o.config.worker.batchSize, maxWaitMs: 5, maxInFlight: Math.max(1, o.config.worker.storeTransactions), retrySingly: true },
  );
  const storeOne = async (delivery: DeliveryJob) => {
    const prepared = await prepareDelivery(parser, delivery);
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
    async (job, token) => {
      const deliveries = deliveriesOf(job.name, job.data);
      const results = await Promise.allSettled(deliveries.map(store));
      const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
      if (!failures.length) return;
      const other = failures.find((e) => !(e instanceof PluginUnavailable));
      if (other) throw other;
      // Only a plugin that does not answer (or its endpoints that cannot be read): the deliveries not
      // stored wait, the job delayed with backoff and no attempt spent, so a plugin down for minutes
      // or hours loses nothing; those stored are skipped when it runs again (their delivery rows).
      const waits = job.data.plugin_waits ?? 0;
      const oldest = Math.min(...deliveries.map((d) => Date.parse(d.received_at) || Date.now()));
      if (Date.now() - oldest > PLUGIN_WAIT_MAX_MS) throw failures[0]; // a day: an ordinary failure from now on (attempts, then a dead letter)
      const delay = pluginWaitDelay(waits);
      await job.updateData({ ...job.data, plugin_waits: waits + 1 });
      await job.moveToDelayed(Date.now() + delay, token);
      o.logger.warn({ job_id: job.id, delivery_ids: deliveries.map((d) => d.delivery_id), waits: waits + 1, delay_ms: delay, err: failures[0].message }, 'webhook plugin unavailable; deliveries wait');
      throw new DelayedError();
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
