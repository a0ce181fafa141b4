import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import type { IdentityDeps } from './deps';
import { DirectorySync } from './directory/sync';
import { endpointOperations } from './endpoint/operations';
import { externalAuthOperations } from './external-auth/operations';
import { ExternalAuthService } from './external-auth/service';
import { loadEndpointConfig } from './endpoint/service';
import { projectGroupOperations } from './project-group/operations';
import { ProjectGroupService } from './project-group/service';
import { tokenOperations } from './token/operations';
import { TokenService } from './token/service';

/** identity's Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: IdentityDeps) {
  const directory = new DirectorySync(deps);
  return createServiceApp({
    service: 'identity',
    logger: deps.logger,
    verifier: deps.verifier,
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: [
      ...tokenOperations(new TokenService(deps)),
      ...projectGroupOperations(new ProjectGroupService(deps, directory)),
      ...externalAuthOperations(new ExternalAuthService(deps)),
      ...endpointOperations(loadEndpointConfig(deps.config.publicBaseUrl)),
    ],
  });
}
