import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { OpsflowDeps } from './deps';
import { ingestRoute } from './event/ingest';
import { eventOperations } from './event/operations';
import { EventService } from './event/service';

/** opsflow's Express app: the resource tables handed to the shared router, plus event ingestion. No I/O here. */
export function createApp(deps: OpsflowDeps) {
  const events = new EventService(deps);
  return createServiceApp({
    onWrite: (auth) => deps.reads.wrote(auth),
    service: 'opsflow',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: [...eventOperations(events)],
    routes: ingestRoute(deps.config, events),
  });
}
