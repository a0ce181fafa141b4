import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MODULES } from '@platform/core';

/**
 * Issue #29 §2: every operation of every app names its permission as upstream does,
 * `<service>:<Resource>.<read|write>` (python-core's authorization handler matches a role's
 * permissions as prefixes of it, so a custom role of `inventory:` must never open another module).
 * Walks the operations of every app as the generated client holds them (the client's own test keeps
 * the generated files equal to the apps' OpenAPI documents: `npm run client:generate -- --check`).
 */
const GENERATED = path.join(__dirname, 'generated');

/** The permission each operation documents (`(permission \`x\`)`), or '' (no permission), or undefined (no token). */
function operations(): { path: string; permission: string | undefined }[] {
  const out: { path: string; permission: string | undefined }[] = [];
  for (const file of readdirSync(GENERATED).filter((f) => f !== 'index.ts')) {
    const text = readFileSync(path.join(GENERATED, file), 'utf8');
    const paths = text.slice(0, text.indexOf('\nexport type webhooks') >= 0 ? text.indexOf('\nexport type webhooks') : text.length);
    for (const block of paths.split(/\n {4}"(?=\/)/).slice(1)) {
      const p = block.slice(0, block.indexOf('"'));
      const described = block.match(/permission `([^`]+)`/);
      out.push({ path: p, permission: described ? described[1] : /no permission needed/.test(block) ? '' : undefined });
    }
  }
  return out;
}

const READ_VERBS = /^(get|list|stat|analyze|export|list-.+|get-.+)$/;
const pascal = (segment: string) => segment.split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join('');

/**
 * Permissions upstream declares (`@transaction(permission=...)` in cloudforet-io/identity, cost-analysis,
 * monitoring, inventory, repository, plugin, statistics services), for the resources we share with it.
 */
const UPSTREAM: Record<string, string[]> = {
  identity: ['ExternalAuth', 'Project', 'ProjectGroup', 'Role', 'RoleBinding', 'User', 'Workspace'].flatMap((r) => [`identity:${r}.read`, `identity:${r}.write`]),
  'cost-analysis': ['cost-analysis:DataSource.read', 'cost-analysis:DataSource.write', 'cost-analysis:Job.read', 'cost-analysis:Job.write', 'cost-analysis:JobTask.read', 'cost-analysis:UnifiedCost.read'],
  monitoring: ['monitoring:DataSource.read', 'monitoring:DataSource.write', 'monitoring:Event.read', 'monitoring:Webhook.read', 'monitoring:Webhook.write'],
  inventory: ['inventory:CloudService.read', 'inventory:CloudService.write'],
  plugin: ['plugin:Plugin.read'],
};
/** Our resources upstream's v2 services do not have (named by the same rule); upstream's EndpointService.list has no permission. */
const OURS_ONLY = ['cost-analysis:ExchangeRate', 'repository:Schema', 'statistics:Storage', 'plugin:Supervisor', 'opsflow:Event'];
const NO_PERMISSION = ['/identity/v1/endpoint/list'];
const NO_TOKEN = ['/identity/v2/token/issue', '/identity/v2/token/grant', '/monitoring/v1/event/create'];

describe('permissions as upstream names them, in every app', () => {
  const ops = operations();

  it('reads every app\'s operations', () => {
    const modules = new Set(ops.map((o) => o.path.split('/')[1]));
    for (const m of ['identity', 'cost-analysis', 'statistics', 'repository', 'monitoring', 'inventory', 'opsflow', 'plugin']) expect(modules).toContain(m);
    expect([...modules].every((m) => Object.hasOwn(MODULES, m))).toBe(true);
    expect(ops.length).toBeGreaterThan(100);
  });

  it('every operation\'s permission is <its module>:<its resource, PascalCase>.<read|write>', () => {
    const wrong: string[] = [];
    for (const { path: p, permission } of ops) {
      if (NO_TOKEN.includes(p)) {
        if (permission !== undefined) wrong.push(`${p}: needs no token, documents ${permission}`);
        continue;
      }
      if (NO_PERMISSION.includes(p)) {
        if (permission !== '') wrong.push(`${p}: upstream declares no permission, we ${permission}`);
        continue;
      }
      const [, module, , ...rest] = p.split('/');
      const verb = rest.pop()!;
      const expected = `${module}:${pascal(rest.join('-'))}.${READ_VERBS.test(verb) ? 'read' : 'write'}`;
      if (permission !== expected) wrong.push(`${p}: ${permission ?? '(none)'}, expected ${expected}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a permission of a resource upstream has is upstream\'s string; the others are listed as ours', () => {
    const unknown = new Set<string>();
    for (const { permission } of ops) {
      if (!permission) continue;
      const module = permission.split(':')[0];
      if (UPSTREAM[module]?.includes(permission)) continue;
      if (OURS_ONLY.some((r) => permission.startsWith(`${r}.`))) continue;
      unknown.add(permission);
    }
    expect([...unknown]).toEqual([]);
  });
});
