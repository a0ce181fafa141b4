import { RevocationPublisher } from '@platform/directory';
import type { IdentityDeps } from '../deps';
import { DirectorySync } from './sync';

/**
 * What a change to identity's records must reach every module with, before the change answers:
 * - the project directory (projects, groups, their users, workspaces) republished for the domain;
 * - revocations: every access token of a user (disabled, deleted, password reset), of a user in one
 *   workspace (a role binding changed or deleted) or of a workspace (disabled, deleted) issued up to T
 *   stops counting in every module (libs/directory, revocations.ts; T and the lock: token/grant-locks.ts).
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

  /** `atMs`: T, every token issued at or before it ends (token/grant-locks.ts takes it from the database). */
  async revokeUser(domainId: string, userId: string, atMs?: number): Promise<void> {
    await this.revocations.revokeUser(domainId, userId, atMs);
  }

  async revokeWorkspace(domainId: string, workspaceId: string, atMs?: number): Promise<void> {
    await this.revocations.revokeWorkspace(domainId, workspaceId, atMs);
  }

  /** A custom role disabled or its permissions changed: every token granted with it, whoever holds it. */
  async revokeRole(domainId: string, roleId: string, atMs?: number): Promise<void> {
    await this.revocations.revokeRole(domainId, roleId, atMs);
  }

  /** A role binding's change: the user's tokens in that workspace only. */
  async revokeUserInWorkspace(domainId: string, userId: string, workspaceId: string, atMs?: number): Promise<void> {
    await this.revocations.revokeUserInWorkspace(domainId, userId, workspaceId, atMs);
  }
}
