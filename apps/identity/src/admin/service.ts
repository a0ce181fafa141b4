import type { RoleType } from '@platform/auth';
import { generateId, isoOrEmpty } from '@platform/core';
import { ApiError, errors } from '@platform/errors';
import { loadSecretKeys } from '@platform/secrets';
import type { PrismaClient } from '../generated/prisma/client';
import { managedRole } from '../token/roles';
import { checkPasswordPolicy, hashPassword } from '../token/password';
import { generateTotpSecret, otpauthUrl } from '../token/totp';
import { sealMfaSecret } from '../mfa/secret';

const ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

function checkId(key: string, value: string) {
  if (!ID.test(value)) throw errors.invalidParameter(key, 'letters, digits, . _ @ - (at most 128)');
}

/**
 * Records the API subset has no operation for (domains, workspaces, users, role bindings, projects):
 * made by the bootstrap at start and by the admin CLI (`npm run admin -- <noun> <verb>`).
 */
export class AdminService {
  /**
   * `secretKeys`: the keys sealing MFA secrets (config.secretKeys); by default, from the environment.
   * `directory`: republishes a domain's project directory after a project change (the CLI and tests
   * pass identity's DirectorySync; the bootstrap needs none, identity publishes everything at start).
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly secretKeys?: readonly Buffer[],
    private readonly directory?: { publish(domainId: string): Promise<void> },
  ) {}

  async createDomain(input: { domainId: string; name: string }) {
    checkId('domain_id', input.domainId);
    const existing = await this.prisma.domain.findUnique({ where: { domain_id: input.domainId } });
    if (existing) throw errors.alreadyExists('domain_id', input.domainId);
    const d = await this.prisma.domain.create({ data: { domain_id: input.domainId, name: input.name } });
    return { domain_id: d.domain_id, name: d.name, state: d.state, created_at: isoOrEmpty(d.created_at) };
  }

  async createWorkspace(input: { domainId: string; workspaceId: string; name: string }) {
    checkId('workspace_id', input.workspaceId);
    await this.requireDomain(input.domainId);
    const key = { domain_id: input.domainId, workspace_id: input.workspaceId };
    if (await this.prisma.workspace.findUnique({ where: { domain_id_workspace_id: key } })) throw errors.alreadyExists('workspace_id', input.workspaceId);
    const w = await this.prisma.workspace.create({ data: { ...key, name: input.name } });
    return { workspace_id: w.workspace_id, name: w.name, state: w.state, domain_id: w.domain_id, created_at: isoOrEmpty(w.created_at) };
  }

  async createUser(input: { domainId: string; userId: string; password: string; name?: string; email?: string; roleType?: RoleType; workspaceId?: string }) {
    checkId('user_id', input.userId);
    const policy = checkPasswordPolicy(input.password);
    if (policy) throw errors.invalidParameter('password', policy);
    await this.requireDomain(input.domainId);
    const roleType = input.roleType;
    if (roleType && !['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER'].includes(roleType)) {
      throw errors.invalidParameter('role_type', 'DOMAIN_ADMIN, WORKSPACE_OWNER or WORKSPACE_MEMBER');
    }
    if (roleType && roleType !== 'DOMAIN_ADMIN') {
      if (!input.workspaceId) throw errors.requiredParameter('workspace_id');
      await this.requireWorkspace(input.domainId, input.workspaceId);
    }
    const key = { domain_id: input.domainId, user_id: input.userId };
    if (await this.prisma.user.findUnique({ where: { domain_id_user_id: key } })) throw errors.alreadyExists('user_id', input.userId);
    const passwordHash = await hashPassword(input.password);
    const user = await this.prisma.$transaction(async (tx) => {
      const u = await tx.user.create({ data: { ...key, name: input.name ?? '', email: input.email ?? '', password_hash: passwordHash } });
      if (roleType) {
        await tx.roleBinding.create({
          data: {
            role_binding_id: generateId('rb'),
            domain_id: input.domainId,
            user_id: input.userId,
            role_type: roleType,
            role_id: managedRole(roleType).roleId,
            resource_group: roleType === 'DOMAIN_ADMIN' ? 'DOMAIN' : 'WORKSPACE',
            workspace_id: roleType === 'DOMAIN_ADMIN' ? '' : input.workspaceId!,
          },
        });
      }
      return u;
    });
    return {
      user_id: user.user_id,
      name: user.name,
      email: user.email,
      state: user.state,
      domain_id: user.domain_id,
      role_type: roleType ?? 'USER',
      workspace_id: roleType && roleType !== 'DOMAIN_ADMIN' ? input.workspaceId : '',
      created_at: isoOrEmpty(user.created_at),
    };
  }

  async createProject(input: { domainId: string; workspaceId: string; projectId: string; name: string; projectGroupId?: string }) {
    checkId('project_id', input.projectId);
    await this.requireWorkspace(input.domainId, input.workspaceId);
    if (input.projectGroupId) {
      const g = await this.prisma.projectGroup.findUnique({
        where: { domain_id_project_group_id: { domain_id: input.domainId, project_group_id: input.projectGroupId } },
      });
      if (!g || g.workspace_id !== input.workspaceId) throw errors.notFound('project_group_id', input.projectGroupId);
    }
    const key = { domain_id: input.domainId, project_id: input.projectId };
    if (await this.prisma.project.findUnique({ where: { domain_id_project_id: key } })) throw errors.alreadyExists('project_id', input.projectId);
    const p = await this.prisma.project.create({
      data: { ...key, workspace_id: input.workspaceId, name: input.name, project_group_id: input.projectGroupId ?? '' },
    });
    await this.directory?.publish(input.domainId);
    return toProjectInfo(p);
  }

  /**
   * Project users (upstream ProjectService.add_users / remove_users): set union and difference, each in
   * one statement so concurrent changes never lose each other. Added users must belong to the project's
   * workspace (a role binding there, or DOMAIN_ADMIN), as for project groups. The directory is
   * republished before answering, so every module applies the change to the next request.
   */
  async addProjectUsers(input: { domainId: string; projectId: string; users: string[] }) {
    const p = await this.requireProject(input.domainId, input.projectId);
    const users = checkUsers(input.users);
    const bindings = await this.prisma.roleBinding.findMany({
      where: { domain_id: p.domain_id, user_id: { in: users }, OR: [{ workspace_id: p.workspace_id }, { role_type: 'DOMAIN_ADMIN' }] },
      select: { user_id: true },
    });
    const known = new Set(bindings.map((b) => b.user_id));
    const missing = users.find((u) => !known.has(u));
    if (missing) throw errors.notFound('user_id', missing);
    return this.changeProjectUsers(p, 'ARRAY(SELECT DISTINCT unnest(users || $3::text[]) ORDER BY 1)', users);
  }

  async removeProjectUsers(input: { domainId: string; projectId: string; users: string[] }) {
    const p = await this.requireProject(input.domainId, input.projectId);
    return this.changeProjectUsers(p, 'ARRAY(SELECT u FROM unnest(users) AS u WHERE u <> ALL($3::text[]) ORDER BY 1)', checkUsers(input.users));
  }

  private async changeProjectUsers(p: ProjectRow, expression: string, users: string[]) {
    const [updated] = await this.prisma.$queryRawUnsafe<ProjectRow[]>(
      `UPDATE project SET users = ${expression} WHERE domain_id = $1 AND project_id = $2 RETURNING *`,
      p.domain_id,
      p.project_id,
      users,
    );
    if (!updated) throw errors.notFound('project_id', p.project_id);
    await this.directory?.publish(p.domain_id);
    return toProjectInfo(updated);
  }

  private async requireProject(domainId: string, projectId: string): Promise<ProjectRow> {
    await this.requireDomain(domainId);
    const p = await this.prisma.project.findUnique({ where: { domain_id_project_id: { domain_id: domainId, project_id: projectId } } });
    if (!p) throw errors.notFound('project_id', projectId);
    return p;
  }

  async enableMfa(input: { domainId: string; userId: string }) {
    const key = { domain_id: input.domainId, user_id: input.userId };
    if (!(await this.prisma.user.findUnique({ where: { domain_id_user_id: key } }))) throw errors.notFound('user_id', input.userId);
    const secret = generateTotpSecret();
    const sealed = sealMfaSecret(this.secretKeys ?? loadSecretKeys(), input.domainId, input.userId, secret);
    await this.prisma.user.update({ where: { domain_id_user_id: key }, data: { mfa_enabled: true, mfa_secret: sealed } });
    return { user_id: input.userId, domain_id: input.domainId, mfa_type: 'OTP', secret, otpauth_url: otpauthUrl(secret, `${input.userId}@${input.domainId}`) };
  }

  private async requireDomain(domainId: string) {
    const d = await this.prisma.domain.findUnique({ where: { domain_id: domainId } });
    if (!d) throw errors.notFound('domain_id', domainId);
    return d;
  }

  private async requireWorkspace(domainId: string, workspaceId: string) {
    await this.requireDomain(domainId);
    const w = await this.prisma.workspace.findUnique({ where: { domain_id_workspace_id: { domain_id: domainId, workspace_id: workspaceId } } });
    if (!w) throw errors.notFound('workspace_id', workspaceId);
    return w;
  }
}

type ProjectRow = {
  domain_id: string;
  project_id: string;
  workspace_id: string;
  name: string;
  project_group_id: string;
  users: string[];
  created_at: Date;
};

function toProjectInfo(p: ProjectRow) {
  return {
    project_id: p.project_id,
    name: p.name,
    workspace_id: p.workspace_id,
    project_group_id: p.project_group_id,
    users: p.users ?? [],
    domain_id: p.domain_id,
    created_at: isoOrEmpty(p.created_at),
  };
}

/** A non-empty list of user ids, each well-formed, without duplicates. */
function checkUsers(users: string[]): string[] {
  const list = [...new Set(users.map((u) => u.trim()).filter(Boolean))];
  if (list.length === 0) throw errors.requiredParameter('users');
  if (list.length > 1000) throw errors.invalidParameter('users', 'at most 1000 user ids at once');
  for (const u of list) checkId('users', u);
  return list;
}

export { ApiError };
