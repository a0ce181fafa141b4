import { DirectoryPublisher } from '@platform/directory';
import { xactLock } from '../locks';
import type { IdentityDeps } from '../deps';

/** Publishes the project directory (see libs/directory) from identity's tables. */
export class DirectorySync {
  private readonly publisher: DirectoryPublisher;

  constructor(private readonly deps: Pick<IdentityDeps, 'prisma' | 'redis' | 'redisPrefix' | 'logger'>) {
    this.publisher = new DirectoryPublisher(deps.redis, deps.redisPrefix);
  }

  /**
   * Reads the domain and writes it to Redis under a per-domain advisory lock, so publishes from every
   * identity replica and the admin CLI are serialized: a publish that read older rows can never land
   * after one that read newer rows (the last writer read everything committed before it).
   */
  async publish(domainId: string): Promise<void> {
    await this.deps.prisma.$transaction(
      async (tx) => {
        await xactLock(tx, `directory:${domainId}`);
        const projects = await tx.project.findMany({
          where: { domain_id: domainId },
          select: { project_id: true, workspace_id: true, project_group_id: true, name: true, users: true, project_type: true },
        });
        const groups = await tx.projectGroup.findMany({
          where: { domain_id: domainId },
          select: { project_group_id: true, workspace_id: true, parent_group_id: true, users: true },
        });
        const workspaces = await tx.workspace.findMany({ where: { domain_id: domainId }, select: { workspace_id: true, name: true } });
        await this.publisher.publish(domainId, { projects, groups, workspaces });
      },
      { timeout: 30_000 },
    );
  }

  async publishAll(): Promise<number> {
    const domains = await this.deps.prisma.domain.findMany({ select: { domain_id: true } });
    for (const d of domains) await this.publish(d.domain_id);
    return domains.length;
  }
}
