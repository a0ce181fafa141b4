import { RevocationPublisher } from '@platform/directory';
import type { IdentityDeps } from '../deps';
import { DirectorySync } from './sync';

/**
 * What a change to identity's records must reach every module with, before the change answers:
 * - the project directory (projects, groups, their users, workspaces) republished for the domain;
 * - revocations: every access token of a user (disabled, deleted, password reset), of a user in one
 *   workspace (a role binding changed or deleted) or of a workspace (disabled, deleted) issued up to T
 *   stops counting in every module (libs/directory, revocations.ts; T and the lock: revocation/grant-locks.ts).
 * Every service that changes these records takes one (never optional: leaving it out would skip a
 * publish or a revocation without a word). The API, the admin CLI and the tests give `RedisEffects`;
 * the bootstrap alone gives `BOOTSTRAP_EFFECTS`.
 */
export interface Effects {
  publish(domainId: string): Promise<void>;
  /** `atMs`: T, every token issued at or before it ends (revocation/grant-locks.ts takes it from the database). */
  revokeUser(domainId: string, userId: string, atMs?: number): Promise<void>;
  revokeWorkspace(domainId: string, workspaceId: string, atMs?: number): Promise<void>;
  /** A custom role disabled or its permissions changed: every token granted with it, whoever holds it. */
  revokeRole(domainId: string, roleId: string, atMs?: number): Promise<void>;
  /** A role binding's change: the user's tokens in that workspace only. */
  revokeUserInWorkspace(domainId: string, userId: string, workspaceId: string, atMs?: number): Promise<void>;
}

/** The effects as every module reads them: the directory and the revocations published in Redis. */
export class RedisEffects implements Effects {
  private readonly revocations: RevocationPublisher;
  readonly directory: DirectorySync;

  constructor(deps: Pick<IdentityDeps, 'prisma' | 'redis' | 'redisPrefix' | 'logger'>, directory?: DirectorySync) {
    this.directory = directory ?? new DirectorySync(deps);
    this.revocations = new RevocationPublisher(deps.redis, deps.redisPrefix);
  }

  publish(domainId: string): Promise<void> {
    return this.directory.publish(domainId);
  }

  /** `atMs`: T, every token issued at or before it ends (revocation/grant-locks.ts takes it from the database). */
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

/**
 * The bootstrap's effects: none, by decision (docs/decisions/code-shape.md, "Effects"). It runs in
 * identity's start before it serves (main.ts), creating only what is missing: a domain, a workspace, a
 * user and their DOMAIN_ADMIN binding, on which no token rests yet (nothing to revoke), and identity
 * publishes every domain's directory right after it (`DirectorySync.publishAll`).
 */
export const BOOTSTRAP_EFFECTS: Effects = {
  publish: async () => {},
  revokeUser: async () => {},
  revokeWorkspace: async () => {},
  revokeRole: async () => {},
  revokeUserInWorkspace: async () => {},
};
