import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { InventoryDeps } from './deps';
import { CloudServiceExporter, DOWNLOAD_PATH } from './cloud-service/export';
import { cloudServiceOperations } from './cloud-service/operations';
import { CloudServiceService } from './cloud-service/service';

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
    routes: (app, { wrap }) => {
      app.get(
        `${DOWNLOAD_PATH}/:token`,
        wrap('GET ' + DOWNLOAD_PATH, (req, res, ctx) => exporter.download(String(req.params.token), req.headers.authorization, res, ctx.logger)),
      );
    },
  });
}
