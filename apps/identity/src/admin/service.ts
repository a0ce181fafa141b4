import type { RoleType } from '@platform/auth';
import { isoOrEmpty } from '@platform/core';
import { ReadRouter, type Pool } from '@platform/db';
import { ApiError, errors } from '@platform/errors';
import { loadSecretKeys } from '@platform/secrets';
import type { PrismaClient } from '../generated/prisma/client';
import type { Effects } from '../directory/effects';
import { checkId } from '../ids';
import { managedRole } from '../role/managed';
import { generateTotpSecret, otpauthUrl } from '../mfa/totp';
import { sealMfaSecret } from '../mfa/secret';
import { WorkspaceService } from '../workspace/service';
import { createUserInDomain } from '../user/service';
import { RoleBindingService } from '../role-binding/service';
import { ProjectService } from '../project/service';
import { DomainRepository } from '../domain/repository';
import { UserRepository } from '../user/repository';

/**
 * The admin CLI (`npm run admin -- <noun> <verb>`) and the bootstrap: bootstrap and break-glass, for
 * an operator with access to the identity database. Everything but domains and MFA goes through the
 * services the API uses (same rules, same directory publishes and revocations); only who asks differs
 * (no caller: the ids are given).
 */
export class AdminService {
  private readonly workspaces: WorkspaceService;
  private readonly bindings: RoleBindingService;
  private readonly projects: ProjectService;
  private readonly domains: DomainRepository;
  private readonly users: UserRepository;

  /**
   * `effects`: directory publishes and revocations (the CLI and tests: identity's `RedisEffects`; the
   * bootstrap: `BOOTSTRAP_EFFECTS`). `secretKeys`: the keys sealing MFA secrets (config.secretKeys); by
   * default, from the environment.
   */
  constructor(
    private readonly deps: { prisma: PrismaClient; pool: Pool },
    effects: Effects,
    private readonly secretKeys?: readonly Buffer[],
  ) {
    // An administrator reads what they write: the primary.
    const withReads = { ...deps, reads: new ReadRouter({ primary: deps.pool }) };
    this.workspaces = new WorkspaceService(withReads, effects);
    this.bindings = new RoleBindingService(withReads, effects);
    const noDirectory = {
      memberProjects: () => Promise.reject(new Error('the admin CLI has no caller')),
      projectsInGroup: () => Promise.reject(new Error('the admin CLI has no caller')),
    };
    this.projects = new ProjectService(withReads, noDirectory, effects);
    this.domains = new DomainRepository(deps.prisma);
    this.users = new UserRepository(deps.prisma);
  }

  async createDomain(input: { domainId: string; name: string }) {
    checkId('domain_id', input.domainId);
    if (await this.domains.existsIgnoringCase(input.domainId)) throw errors.alreadyExists('domain_id', input.domainId); // 'Acme' beside 'acme' too
    const d = await this.domains.insert({ domain_id: input.domainId, name: input.name });
    return { domain_id: d.domain_id, name: d.name, state: d.state, created_at: isoOrEmpty(d.created_at) };
  }

  async createWorkspace(input: { domainId: string; workspaceId: string; name: string }) {
    const w = await this.workspaces.createInDomain(input.domainId, { workspace_id: input.workspaceId, name: input.name });
    return { workspace_id: w.workspace_id, name: w.name, state: w.state, domain_id: w.domain_id, created_at: w.created_at };
  }

  /** A LOCAL user with a password, and optionally a role (a workspace role names its workspace). */
  async createUser(input: { domainId: string; userId: string; password: string; name?: string; email?: string; roleType?: RoleType; workspaceId?: string }) {
    const roleType = input.roleType;
    if (roleType && !['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER'].includes(roleType)) {
      throw errors.invalidParameter('role_type', 'DOMAIN_ADMIN, WORKSPACE_OWNER or WORKSPACE_MEMBER');
    }
    if (roleType && roleType !== 'DOMAIN_ADMIN' && !input.workspaceId) throw errors.requiredParameter('workspace_id');
    // The user and their binding together: a binding that fails leaves no user behind.
    const user = await this.deps.prisma.$transaction(async (tx) => {
      const u = await createUserInDomain(tx, input.domainId, { user_id: input.userId, password: input.password, name: input.name, email: input.email });
      if (roleType) {
        await this.bindings.createInDomain(
          input.domainId,
          {
            user_id: input.userId,
            role_id: managedRole(roleType).roleId,
            resource_group: roleType === 'DOMAIN_ADMIN' ? 'DOMAIN' : 'WORKSPACE',
            workspace_id: roleType === 'DOMAIN_ADMIN' ? undefined : input.workspaceId,
          },
          tx,
        );
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

  createProject(input: { domainId: string; workspaceId: string; projectId: string; name: string; projectGroupId?: string }) {
    return this.projects.createInDomain(input.domainId, {
      project_id: input.projectId,
      workspace_id: input.workspaceId,
      name: input.name,
      project_group_id: input.projectGroupId,
    });
  }

  /** Project users: the API's rules (see ProjectService.addUsersTo). */
  async addProjectUsers(input: { domainId: string; projectId: string; users: string[] }) {
    return this.projects.addUsersTo(await this.projects.findForAdmin(input.domainId, input.projectId), input.users);
  }

  async removeProjectUsers(input: { domainId: string; projectId: string; users: string[] }) {
    return this.projects.removeUsersFrom(await this.projects.findForAdmin(input.domainId, input.projectId), input.users);
  }

  async enableMfa(input: { domainId: string; userId: string }) {
    if (!(await this.users.find(input.domainId, input.userId))) throw errors.notFound('user_id', input.userId);
    const secret = generateTotpSecret();
    const sealed = sealMfaSecret(this.secretKeys ?? loadSecretKeys(), input.domainId, input.userId, secret);
    await this.users.enableMfa(input.domainId, input.userId, sealed);
    return { user_id: input.userId, domain_id: input.domainId, mfa_type: 'OTP', secret, otpauth_url: otpauthUrl(secret, `${input.userId}@${input.domainId}`) };
  }
}

export { ApiError };
