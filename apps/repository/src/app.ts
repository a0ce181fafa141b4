import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { RepositoryDeps } from './deps';
import { schemaOperations } from './schema/operations';
import type { SchemaService } from './schema/service';

/** repository's Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: RepositoryDeps, schemas: SchemaService) {
  return createServiceApp({
    onWrite: (auth) => deps.reads.wrote(auth),
    service: 'repository',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool) },
    operations: [...schemaOperations(schemas)],
  });
}
