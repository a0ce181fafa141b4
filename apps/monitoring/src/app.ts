import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { MonitoringDeps } from './deps';
import { dataSourceOperations } from './data-source/operations';
import { DataSourceService } from './data-source/service';
import { eventOperations } from './event/operations';
import { EventService } from './event/service';
import { IngestService } from './ingest/accept';
import { webhookRoute } from './ingest/route';
import { WebhookCache } from './ingest/webhook-cache';
import { webhookOperations } from './webhook/operations';
import { WebhookService } from './webhook/service';

/** monitoring's Express app: the resource tables handed to the shared router, plus the webhook URL. No I/O here. */
export function createApp(deps: MonitoringDeps) {
  const cache = new WebhookCache(deps.pool, deps.config.ingest.webhookCacheMs);
  const ingest = new IngestService(cache, deps.queue, deps.config.ingest.enqueueTimeoutMs, deps.logger, deps.queueReady);
  return createServiceApp({
    service: 'monitoring',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: [
      ...dataSourceOperations(new DataSourceService(deps)),
      ...webhookOperations(new WebhookService(deps, cache)),
      ...eventOperations(new EventService(deps), ingest),
    ],
    routes: webhookRoute(ingest),
  });
}
