import { DirectoryPublisher } from '@platform/directory';
import type { IdentityDeps } from '../deps';

/** Publishes the project directory (see libs/directory) from identity's tables. */
export class DirectorySync {
  private readonly publisher: DirectoryPublisher;

  constructor(private readonly deps: Pick<IdentityDeps, 'prisma' | 'redis' | 'redisPrefix' | 'logger'>) {
    this.publisher = new DirectoryPublisher(deps.redis, deps.redisPrefix);
  }

  async publish(domainId: string): Promise<void> {
    const [projects, groups, workspaces] = await Promise.all([
      this.deps.prisma.project.findMany({ where: { domain_id: domainId }, select: { project_id: true, workspace_id: true, project_group_id: true, name: true } }),
      this.deps.prisma.projectGroup.findMany({ where: { domain_id: domainId }, select: { project_group_id: true, workspace_id: true, parent_group_id: true } }),
      this.deps.prisma.workspace.findMany({ where: { domain_id: domainId }, select: { workspace_id: true, name: true } }),
    ]);
    await this.publisher.publish(domainId, { projects, groups, workspaces });
  }

  async publishAll(): Promise<number> {
    const domains = await this.deps.prisma.domain.findMany({ select: { domain_id: true } });
    for (const d of domains) await this.publish(d.domain_id);
    return domains.length;
  }
}
