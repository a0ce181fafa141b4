import Redis from 'ioredis';
import { createPool, createPrisma } from '@platform/db';
import { createLogger } from '@platform/core';
import { attachErrorLogging } from '@platform/queue';
import { isApiError } from '@platform/errors';
import type { RoleType } from '@platform/auth';
import { PrismaClient } from '../generated/prisma/client';
import { loadConfig } from '../config';
import { RedisEffects } from '../directory/effects';
import { sealMfaSecrets } from '../mfa/secret';
import { sealExternalAuthSecrets } from '../external-auth/secret';
import { AdminService } from './service';

const USAGE = `usage: npm run admin -- <noun> <verb> [--flags]
  domain create --domain-id D --name N
  workspace create --domain-id D --workspace-id W --name N
  user create --domain-id D --user-id U --password P [--role-type DOMAIN_ADMIN|WORKSPACE_OWNER|WORKSPACE_MEMBER --workspace-id W] [--name N] [--email E]
  user mfa-enable --domain-id D --user-id U
  project create --domain-id D --workspace-id W --project-id P --name N [--project-group-id G]
  project add-users --domain-id D --project-id P --users U1,U2      (users of the project's workspace)
  project remove-users --domain-id D --project-id P --users U1,U2
  secrets seal      seal MFA secrets and external-auth secret_data stored in plain text or with a previous key (idempotent)`;

function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${a} needs a value`);
    flags[a.slice(2)] = value;
    i++;
  }
  return flags;
}

async function main() {
  const [noun, verb, ...rest] = process.argv.slice(2);
  if (!noun || !verb) {
    console.error(USAGE);
    process.exit(2);
  }
  const f = parseFlags(rest);
  const need = (k: string) => {
    if (!f[k]) throw new Error(`--${k} is required\n${USAGE}`);
    return f[k];
  };
  const users = () =>
    need('users')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
  const config = loadConfig();
  const pool = createPool(config.databaseUrl, { max: 2 });
  const prisma = createPrisma(PrismaClient, pool);
  // Changes republish the project directory and record revocations before the command answers, as
  // the API's do, so every module applies them to its next request. Redis is connected on the first
  // publish or revocation only (lazyConnect): a command that has none (domain create, user create,
  // mfa-enable, secrets seal) never connects.
  const redis = attachErrorLogging(new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true }), createLogger('admin', 'warn'), 'redis');
  // DIRECTORY_PREFIX: the prefix of the directory's Redis keys ("" as identity's server writes them;
  // cost-analysis reads the same variable).
  const directoryPrefix = process.env.DIRECTORY_PREFIX ?? '';
  const effects = new RedisEffects({ prisma, redis, redisPrefix: directoryPrefix, logger: createLogger('admin', 'silent') });
  const admin = new AdminService({ prisma, pool }, effects, config.secretKeys);
  try {
    let out: unknown;
    const cmd = `${noun} ${verb}`;
    switch (cmd) {
      case 'domain create':
        out = await admin.createDomain({ domainId: need('domain-id'), name: need('name') });
        break;
      case 'workspace create':
        out = await admin.createWorkspace({ domainId: need('domain-id'), workspaceId: need('workspace-id'), name: need('name') });
        break;
      case 'user create':
        out = await admin.createUser({
          domainId: need('domain-id'),
          userId: need('user-id'),
          password: need('password'),
          name: f['name'],
          email: f['email'],
          roleType: f['role-type'] as RoleType | undefined,
          workspaceId: f['workspace-id'],
        });
        break;
      case 'user mfa-enable':
        out = await admin.enableMfa({ domainId: need('domain-id'), userId: need('user-id') });
        break;
      case 'secrets seal':
        out = [
          { column: 'user.mfa_secret', ...(await sealMfaSecrets(pool, config.secretKeys)) },
          { column: 'external_auth.secret_data', ...(await sealExternalAuthSecrets(pool, config.secretKeys)) },
        ];
        break;
      case 'project create':
        out = await admin.createProject({
          domainId: need('domain-id'),
          workspaceId: need('workspace-id'),
          projectId: need('project-id'),
          name: need('name'),
          projectGroupId: f['project-group-id'],
        });
        break;
      case 'project add-users':
        out = await admin.addProjectUsers({ domainId: need('domain-id'), projectId: need('project-id'), users: users() });
        break;
      case 'project remove-users':
        out = await admin.removeProjectUsers({ domainId: need('domain-id'), projectId: need('project-id'), users: users() });
        break;
      default:
        throw new Error(`unknown command "${cmd}"\n${USAGE}`);
    }
    console.log(JSON.stringify(out, null, 2));
  } finally {
    redis.disconnect();
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
  }
}

main().catch((err) => {
  // An API-style error prints as the API would answer it: its status, stable code and message.
  console.error(isApiError(err) ? `${err.status} ${err.code}: ${err.message}` : (err?.message ?? String(err)));
  process.exit(1);
});
