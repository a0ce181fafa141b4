import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { PluginDeps } from './deps';
import { supervisorOperations } from './supervisor/operations';
import { SupervisorService } from './supervisor/service';

/** The plugin module's Express app: the operation table handed to the shared router. No I/O here. */
export function createApp(deps: PluginDeps) {
  const supervisors = new SupervisorService(deps);
  return createServiceApp({
    onWrite: (auth) => deps.reads.wrote(auth),
    service: 'plugin',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: supervisorOperations(supervisors),
  });
}
