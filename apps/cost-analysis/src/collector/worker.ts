import { postgresCheck, withTransaction } from '@platform/db';
import type IORedis from 'ioredis';
import { createWorker, type Worker } from '@platform/queue';
import { lockDomainUnifiedCosts, monthsToConfirm, rebuildUnifiedCosts } from '../unified-cost/builder';
import { Collector, type CollectorDeps } from './collector';
import { maintainPartitions } from '../partitions';
import { COLLECT_QUEUE, type CollectTaskData } from './queue';

/**
 * The collection worker: BullMQ jobs → Collector, a sweep every `sweepMs` (requeue lost tasks, time out
 * stuck jobs) and the monthly confirmation of unified costs. Used by src/worker.ts and by tests.
 */
export function startCollectionWorker(deps: CollectorDeps, connection: IORedis, o: { sweepMs?: number } = {}) {
  const collector = new Collector(deps);
  const { config, logger } = deps;
  const worker: Worker<CollectTaskData, string> = createWorker<CollectTaskData, string>(
    COLLECT_QUEUE,
    (job) => collector.process(job.data, job.attemptsMade + 1 >= (job.opts.attempts ?? 1)),
    // A task that fails because Postgres is down goes back to the queue without spending an attempt:
    // an outage longer than the retries' backoff fails no job.
    // One domain's tasks hold at most WORKER_DOMAIN_SLOTS slots (across worker processes): the others
    // wait in the queue while another domain's tasks run (issue #32).
    {
      connection,
      prefix: config.queuePrefix,
      logger,
      dependencies: postgresCheck(deps.pool),
      fairShare: { group: (job) => job.data.domain_id, slots: config.worker.domainSlots, leaseMs: config.worker.lockDurationMs },
    },
    { concurrency: config.worker.concurrency, lockDuration: config.worker.lockDurationMs, stalledInterval: config.worker.stalledIntervalMs },
  );
  // A job that stalled too often is failed by BullMQ without running the processor: fail its task too.
  worker.on('failed', (job, err) => {
    if (job && (/stalled/i.test(err.message) || job.attemptsMade >= (job.opts.attempts ?? 1))) {
      collector.failTask(job.data.domain_id, job.data.job_task_id, 'ERROR_COLLECT_FAILED', err.message).catch(() => {});
    }
  });

  const confirm = async () => {
    for (const { domain_id, billed_month } of await monthsToConfirm(deps.pool, config.aggregationDay)) {
      await withTransaction(deps.pool, async (client) => {
        await lockDomainUnifiedCosts(client, domain_id);
        await rebuildUnifiedCosts(client, deps, domain_id, [billed_month]);
      }).catch((e) => logger.warn({ err: (e as Error).message, domain_id, billed_month }, 'confirming unified costs failed'));
    }
  };
  const housekeeping = () =>
    collector
      .sweep()
      .then((r) => (r.requeued || r.failed || r.timedOut) && logger.info(r, 'collection sweep'))
      .then(confirm)
      .then(() => maintainPartitions(deps.pool))
      .then(({ created, inDefault }) => {
        if (created.length) logger.info({ created }, 'month partitions created');
        if (inDefault) logger.warn({ rows: inDefault }, 'cost rows in a default partition (not pruned): see docs/decisions/database.md');
      })
      .catch((err) => logger.warn({ err: (err as Error).message }, 'collection sweep failed'));
  void housekeeping();
  const timer = setInterval(housekeeping, o.sweepMs ?? 60_000);
  timer.unref();
  return {
    worker,
    collector,
    async close() {
      clearInterval(timer);
      await worker.close();
    },
  };
}
