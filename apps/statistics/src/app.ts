import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { StatisticsDeps } from './deps';
import { storageOperations } from './storage/operations';
import { StorageService } from './storage/service';

/** statistics' Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: StatisticsDeps) {
  return createServiceApp({
    onWrite: (auth) => deps.reads.wrote(auth),
    service: 'statistics',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool) },
    operations: [...storageOperations(new StorageService(deps))],
  });
}
