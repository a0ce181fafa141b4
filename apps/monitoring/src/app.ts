import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import { DirectoryClient } from '@platform/directory';
import type { MonitoringDeps } from './deps';
import { ProjectAccess } from './scope';
import { dataSourceOperations } from './data-source/operations';
import { DataSourceService } from './data-source/service';
import { eventOperations } from './event/operations';
import { EventService } from './event/service';
import { IngestService } from './ingest/service';
import { DeliveryEnqueuer } from './ingest/enqueue';
import { webhookRoute } from './ingest/route';
import { WebhookCache } from './ingest/webhook-cache';
import { webhookOperations } from './webhook/operations';
import { WebhookService } from './webhook/service';

/** The delivery queue's connection is up (the webhook URL can take payloads). */
const queueCheck = (ready: () => boolean) => async () => {
  if (!ready()) throw new Error('the delivery queue is not connected to Redis');
};

/** monitoring's Express app: the resource tables handed to the shared router, plus the webhook URL. No I/O here. */
export function createApp(deps: MonitoringDeps) {
  const { webhookCacheMs, webhookLookupTimeoutMs } = deps.config.ingest;
  const cache = new WebhookCache(deps.pool, { ttlMs: webhookCacheMs, lookupTimeoutMs: webhookLookupTimeoutMs, logger: deps.logger }, deps.webhookCopy);
  const { enqueueTimeoutMs, batchMax, batchBytes } = deps.config.ingest;
  const enqueuer = new DeliveryEnqueuer(deps.queue, deps.pool, { timeoutMs: enqueueTimeoutMs, maxBatch: batchMax, maxBatchBytes: batchBytes }, deps.logger, deps.queueReady);
  const ingest = new IngestService(cache, enqueuer, deps.logger);
  const access = new ProjectAccess(new DirectoryClient(deps.redis, deps.redisPrefix));
  return createServiceApp({
    onWrite: (auth) => deps.reads.wrote(auth),
    service: 'monitoring',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping(), queue: queueCheck(deps.queueReady) },
    queues: [deps.queue],
    operations: [
      ...dataSourceOperations(new DataSourceService(deps)),
      ...webhookOperations(new WebhookService(deps, cache, access, deps.webhookCopy)),
      ...eventOperations(new EventService(deps, access), ingest),
    ],
    routes: webhookRoute(ingest),
  });
}
