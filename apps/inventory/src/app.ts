import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { InventoryDeps } from './deps';
import { cloudServiceOperations } from './cloud-service/operations';
import { CloudServiceService } from './cloud-service/service';
import { downloadRoute } from './export/route';
import { CloudServiceExporter } from './export/service';

/** inventory's Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: InventoryDeps) {
  const cloudServices = new CloudServiceService(deps);
  const exporter = new CloudServiceExporter(deps, cloudServices.scoper);
  return createServiceApp({
    service: 'inventory',
    logger: deps.logger,
    verifier: deps.verifier,
    onWrite: (auth) => deps.reads.wrote(auth),
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: cloudServiceOperations(cloudServices, exporter),
    // Export files are fetched with GET from the URL the export operation answers.
    routes: downloadRoute((token, authorization, res, logger) => exporter.download(token, authorization, res, logger)),
  });
}
