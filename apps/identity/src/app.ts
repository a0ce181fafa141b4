import { createServiceApp } from '@platform/http';
import { postgresCheck } from '@platform/db';
import { DirectoryClient } from '@platform/directory';
import type { IdentityDeps } from './deps';
import { DirectorySync } from './directory/sync';
import { RedisEffects } from './directory/effects';
import { endpointOperations } from './endpoint/operations';
import { externalAuthOperations } from './external-auth/operations';
import { ExternalAuthService } from './external-auth/service';
import { loadEndpointConfig } from './endpoint/service';
import { projectGroupOperations } from './project-group/operations';
import { ProjectGroupService } from './project-group/service';
import { projectOperations } from './project/operations';
import { ProjectService } from './project/service';
import { roleBindingOperations } from './role-binding/operations';
import { RoleBindingService } from './role-binding/service';
import { roleOperations } from './role/operations';
import { RoleService } from './role/service';
import { tokenOperations } from './token/operations';
import { TokenService } from './token/service';
import { userOperations } from './user/operations';
import { UserService } from './user/service';
import { workspaceOperations } from './workspace/operations';
import { WorkspaceService } from './workspace/service';

/** identity's Express app: the resource tables handed to the shared router. No I/O here. */
export function createApp(deps: IdentityDeps) {
  const directory = new DirectorySync(deps);
  const effects = new RedisEffects(deps, directory);
  return createServiceApp({
    service: 'identity',
    logger: deps.logger,
    verifier: deps.verifier,
    onWrite: (auth) => deps.reads.wrote(auth),
    readiness: { postgres: postgresCheck(deps.pool), redis: () => deps.redis.ping() },
    operations: [
      ...tokenOperations(new TokenService(deps)),
      ...workspaceOperations(new WorkspaceService(deps, effects)),
      ...userOperations(new UserService(deps, effects)),
      ...roleOperations(new RoleService(deps, effects)),
      ...roleBindingOperations(new RoleBindingService(deps, effects)),
      ...projectGroupOperations(new ProjectGroupService(deps, effects)),
      ...projectOperations(new ProjectService(deps, new DirectoryClient(deps.redis, deps.redisPrefix), effects)),
      ...externalAuthOperations(new ExternalAuthService(deps)),
      ...endpointOperations(loadEndpointConfig(deps.config.publicBaseUrl)),
    ],
  });
}
