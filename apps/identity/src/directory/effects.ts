import { RevocationPublisher } from '@platform/directory';
import type { IdentityDeps } from '../deps';
import { DirectorySync } from './sync';

/**
 * What a change to identity's records must reach every module with, before the change answers:
 * - the project directory (projects, groups, their users, workspaces) republished for the domain;
 * - revocations: every access token of a user (disabled, deleted, role changed, password reset) or of
 *   a workspace (disabled, deleted) issued up to now stops counting in every module (libs/directory,
 *   revocations.ts).
 * The API's services, the admin CLI and the tests share it.
 */
export class Effects {
  private readonly revocations: RevocationPublisher;
  readonly directory: DirectorySync;

  constructor(deps: Pick<IdentityDeps, 'prisma' | 'redis' | 'redisPrefix' | 'logger'>, directory?: DirectorySync) {
    this.directory = directory ?? new DirectorySync(deps);
    this.revocations = new RevocationPublisher(deps.redis, deps.redisPrefix);
  }

  publish(domainId: string): Promise<void> {
    return this.directory.publish(domainId);
  }

  async revokeUser(domainId: string, userId: string): Promise<void> {
    await this.revocations.revokeUser(domainId, userId);
  }

  async revokeWorkspace(domainId: string, workspaceId: string): Promise<void> {
    await this.revocations.revokeWorkspace(domainId, workspaceId);
  }
}
