import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startPlatform, totpNow, type Platform } from '@platform/testing';

/**
 * platformctl as a user runs it: `node tools/ctl/ctl.mjs ...` as a process, against every app built and
 * started as production runs them behind real nginx (ports shifted by CTL_TEST_PORT_OFFSET, the
 * gateway on CTL_TEST_GATEWAY_PORT, Redis database CTL_TEST_REDIS_URL of its own).
 */
const root = path.resolve(__dirname, '../../..');
const PASSWORD = 'e2e-admin-password'; // startPlatform's BOOTSTRAP_PASSWORD

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('platformctl against the platform', () => {
  let p: Platform;
  const configDir = mkdtempSync(path.join(os.tmpdir(), 'platformctl-'));
  const sessionFile = path.join(configDir, 'session.json');

  /** Runs the CLI; `input` is what standard input holds (no terminal). */
  function ctl(args: string[], o: { env?: Record<string, string>; input?: string; config?: string } = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const env: Record<string, string> = { ...(process.env as Record<string, string>), PLATFORM_CONFIG_DIR: o.config ?? configDir, ...o.env };
      delete env.PLATFORM_PASSWORD;
      delete env.COLUMNS;
      Object.assign(env, o.env);
      const child = spawn(process.execPath, [path.join(root, 'tools/ctl/ctl.mjs'), ...args], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(o.input ?? '');
    });
  }
  const ok = async (args: string[], o?: Parameters<typeof ctl>[1]) => {
    const r = await ctl(args, o);
    if (r.code !== 0) throw new Error(`platformctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async (args: string[], o?: Parameters<typeof ctl>[1]) => JSON.parse(await ok([...args, '-o', 'json'], o));

  beforeAll(async () => {
    p = await startPlatform({
      portOffset: Number(process.env.CTL_TEST_PORT_OFFSET || 13_000),
      gatewayPort: Number(process.env.CTL_TEST_GATEWAY_PORT || 21_080),
      redisUrl: process.env.CTL_TEST_REDIS_URL || 'redis://127.0.0.1:6379/7',
      label: 'ctl',
    });
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
  }, 60_000);

  it('refuses a wrong command, resource or verb with exit code 2, naming what exists', async () => {
    const none = await ctl([]);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('platformctl')]);
    const resource = await ctl(['list', 'identity.Nothing']);
    expect(resource.code).toBe(2);
    expect(resource.stderr).toMatch(/unknown resource identity\.Nothing; resources: .*identity\.ProjectGroup.*inventory\.CloudService/);
    const verb = await ctl(['exec', 'explode', 'identity.ProjectGroup']);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toMatch(/identity\.ProjectGroup has no verb explode; verbs: add-users, change-parent-group, create/);
    const command = await ctl(['frobnicate']);
    expect([command.code, command.stderr]).toEqual([2, expect.stringMatching(/unknown command frobnicate/)]);
    const notLoggedIn = await ctl(['list', 'identity.ProjectGroup'], { config: mkdtempSync(path.join(os.tmpdir(), 'platformctl-none-')) });
    expect([notLoggedIn.code, notLoggedIn.stderr]).toEqual([2, expect.stringMatching(/not logged in/)]);
    const resources = await ok(['api-resources', 'identity']);
    expect(resources.split('\n')[0]).toMatch(/^RESOURCE\s+VERSION\s+VERBS$/);
    expect(resources).toMatch(/identity\.ProjectGroup\s+v2\s+add-users change-parent-group create delete get list remove-users stat update/);
  });

  it('logs in with PLATFORM_PASSWORD, keeping the tokens in a file only its owner reads', async () => {
    const wrong = await ctl(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'admin'], { env: { PLATFORM_PASSWORD: 'not-it' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^ERROR_AUTHENTICATE_FAILURE: /);
    expect(existsSync(sessionFile)).toBe(false);

    const r = await ctl(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'admin', '--workspace-id', 'workspace-local'], { env: { PLATFORM_PASSWORD: PASSWORD } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Logged in to .* as admin@domain-local \(WORKSPACE workspace-local\)/);
    expect(statSync(sessionFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(sessionFile, 'utf8'))).toMatchObject({ endpoint: p.base, domain_id: 'domain-local', scope: 'WORKSPACE', refresh_token: expect.any(String) });
  });

  it('runs any operation with exec, and list / get with filters, pages and every output format', async () => {
    const created = await json(['exec', 'create', 'identity.ProjectGroup', '-p', 'name=platform-team', '-p', 'tags.env=prod']);
    expect(created).toMatchObject({ name: 'platform-team', tags: { env: 'prod' }, project_group_id: expect.stringMatching(/^pg-/) });
    const sub = await json(['exec', 'create', 'identity.ProjectGroup', '-j', JSON.stringify({ name: 'sre', parent_group_id: created.project_group_id })]);
    const bodyFile = path.join(configDir, 'body.json');
    writeFileSync(bodyFile, JSON.stringify({ name: 'billing', tags: { env: 'dev' } }));
    const billing = await json(['exec', 'create', 'identity.ProjectGroup', '-j', `@${bodyFile}`]);
    // a verb as spacectl spells it
    const moved = await json(['exec', 'change_parent_group', 'identity.ProjectGroup', '-p', `project_group_id=${sub.project_group_id}`, '-p', `parent_group_id=${billing.project_group_id}`]);
    expect(moved.parent_group_id).toBe(billing.project_group_id);

    const prod = await json(['list', 'identity.ProjectGroup', '-f', 'tags.env=prod']);
    expect(prod.results.map((g: { name: string }) => g.name)).toEqual(['platform-team']);
    const paged = await json(['list', 'identity.ProjectGroup', '-s', 'name', '--page', '2', '--limit', '1']);
    expect([paged.total_count, paged.results.map((g: { name: string }) => g.name)]).toEqual([3, ['platform-team']]);
    const contains = await json(['list', 'identity.ProjectGroup', '-f', 'name~team', '-f', 'name!=x']);
    expect(contains.results).toHaveLength(1);

    const table = await ok(['list', 'identity.ProjectGroup', '-s', 'name', '-c', 'name,tags.env']);
    expect(table).toBe('NAME           TAGS.ENV\nbilling        dev\nplatform-team  prod\nsre\n');
    const csv = await ok(['list', 'identity.ProjectGroup', '-s', 'name', '-o', 'csv', '-c', 'name,tags']);
    expect(csv).toBe('name,tags\r\nbilling,"{""env"":""dev""}"\r\nplatform-team,"{""env"":""prod""}"\r\nsre,{}\r\n');
    const yaml = YAML.parse(await ok(['get', 'identity.ProjectGroup', created.project_group_id, '-o', 'yaml']));
    expect(yaml).toMatchObject({ project_group_id: created.project_group_id, name: 'platform-team' });
    const record = await ok(['get', 'identity.ProjectGroup', created.project_group_id]);
    expect(record).toMatch(/^KEY\s+VALUE\n/);
    expect(record).toMatch(/\nname\s+platform-team\n/);

    // A table fitted to an 80-column terminal: no line past it.
    const wide = await ok(['list', 'identity.ProjectGroup'], { env: { COLUMNS: '80' } });
    for (const line of wide.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(wide).toMatch(/^PROJECT_GROUP_ID/);
  });

  it('onboards a team as the README shows: a workspace, an EXTERNAL user, a role binding, a project and its users', async () => {
    const config = mkdtempSync(path.join(os.tmpdir(), 'platformctl-org-'));
    const as = (args: string[]) => json(args, { config });
    const login = (extra: string[] = []) =>
      ok(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'admin', ...extra], { config, env: { PLATFORM_PASSWORD: PASSWORD } });
    await login(); // domain scope
    expect(await as(['exec', 'get', 'identity.ExternalAuth'])).toMatchObject({ domain_id: 'domain-local', state: 'DISABLED' });
    const ws = (await as(['exec', 'create', 'identity.Workspace', '-p', 'name=payments-team'])).workspace_id;
    expect(ws).toMatch(/^workspace-/);
    expect(await as(['exec', 'create', 'identity.User', '-p', 'user_id=alice@example.com', '-p', 'auth_type=EXTERNAL', '-p', 'email=alice@example.com'])).toMatchObject({
      user_id: 'alice@example.com',
      auth_type: 'EXTERNAL',
    });
    const binding = await as(['exec', 'create', 'identity.RoleBinding', '-p', 'user_id=alice@example.com', '-p', 'role_id=managed-workspace-member', '-p', 'resource_group=WORKSPACE', '-p', `workspace_id=${ws}`]);
    expect(binding).toMatchObject({ role_type: 'WORKSPACE_MEMBER', workspace_id: ws });
    expect((await as(['list', 'identity.RoleBinding', '-f', `workspace_id=${ws}`])).total_count).toBe(1);
    await login(['--workspace-id', ws]);
    const project = await as(['exec', 'create', 'identity.Project', '-p', 'name=checkout']);
    expect(project).toMatchObject({ workspace_id: ws, project_type: 'PRIVATE' });
    const added = await as(['exec', 'add-users', 'identity.Project', '-p', `project_id=${project.project_id}`, '-p', 'users:=["alice@example.com"]']);
    expect(added.users).toEqual(['alice@example.com']);
    const resources = await ok(['api-resources', 'identity'], { config });
    for (const r of ['identity.Workspace', 'identity.User', 'identity.Role', 'identity.RoleBinding', 'identity.Project', 'identity.ExternalAuth']) expect(resources).toContain(r);
  });

  it('answers an API error with exit code 1 and the envelope\'s code and message on stderr', async () => {
    const missing = await ctl(['get', 'identity.ProjectGroup', 'pg-000000000000']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^ERROR_NOT_FOUND: .*pg-000000000000/);
    const invalid = await ctl(['exec', 'create', 'identity.ProjectGroup', '-p', 'name=x', '-p', 'colour=red']);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^ERROR_INVALID_PARAMETER: /);
    const usage = await ctl(['exec', 'create', 'identity.ProjectGroup', '-p', '__proto__.x=1']);
    expect(usage.code).toBe(2);
  });

  it('stats and analyzes with the query DSL, and exports cloud services to a file', async () => {
    for (const [i, provider] of ['aws', 'aws', 'google_cloud'].entries()) {
      await json(['exec', 'create', 'inventory.CloudService', '-p', `name=vm-${i}`, '-p', `provider=${provider}`, '-p', 'cloud_service_group=Compute', '-p', 'cloud_service_type=Instance', '-p', 'data.cpu:=2']);
    }
    const distinct = await json(['stat', 'identity.ProjectGroup', '-q', '{"distinct": "name"}']);
    expect(distinct.results).toEqual(expect.arrayContaining(['sre', 'billing']));
    const analyzed = await json(['analyze', 'inventory.CloudService', '-q', '{"group_by": ["provider"], "fields": {"n": {"operator": "count"}}, "sort": [{"key": "provider"}]}']);
    expect(analyzed.results).toEqual([
      { provider: 'aws', n: 2 },
      { provider: 'google_cloud', n: 1 },
    ]);

    const xlsx = path.join(configDir, 'machines.xlsx');
    const r = await ctl(['export', 'inventory.CloudService', '-f', 'provider=aws', '--fields', 'name,provider', '-s', 'name', '--out', xlsx]);
    expect([r.code, r.stderr]).toEqual([0, `wrote ${xlsx}\n`]);
    expect(readFileSync(xlsx).subarray(0, 2).toString()).toBe('PK'); // an Office Open XML (zip) file
    const csvFile = path.join(configDir, 'machines.csv');
    await ok(['export', 'inventory.CloudService', '--fields', 'name,provider', '-s', 'name', '--out', csvFile]);
    expect(readFileSync(csvFile, 'utf8').trim().split(/\r?\n/)).toEqual(['name,provider', 'vm-0,aws', 'vm-1,aws', 'vm-2,google_cloud']);
  });

  it('renews a refused access token from the refresh token, and asks to log in again when that fails too', async () => {
    const saved = JSON.parse(readFileSync(sessionFile, 'utf8'));
    writeFileSync(sessionFile, JSON.stringify({ ...saved, access_token: 'expired-or-revoked' }), { mode: 0o600 });
    expect((await json(['list', 'identity.ProjectGroup'])).total_count).toBe(3);
    const renewed = JSON.parse(readFileSync(sessionFile, 'utf8'));
    expect(renewed.access_token).not.toBe('expired-or-revoked');
    expect(renewed.refresh_token).toBe(saved.refresh_token);
    expect(statSync(sessionFile).mode & 0o777).toBe(0o600);

    const other = path.join(configDir, 'broken');
    await ok(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'admin'], { env: { PLATFORM_PASSWORD: PASSWORD }, config: other });
    const s = JSON.parse(readFileSync(path.join(other, 'session.json'), 'utf8'));
    writeFileSync(path.join(other, 'session.json'), JSON.stringify({ ...s, access_token: 'x', refresh_token: 'y' }));
    const r = await ctl(['list', 'statistics.Storage'], { config: other });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERROR_AUTHENTICATE_FAILURE: .*\nThe session cannot be renewed: run platformctl login again\.\n$/);
  });

  it('publish-supervisor publishes plugins (the secret from the environment only) and exec resolves their endpoint', async () => {
    const config = path.join(configDir, 'plugins');
    await ok(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'admin'], { env: { PLATFORM_PASSWORD: PASSWORD }, config });
    const args = ['publish-supervisor', '--name', 'k8s', '--hostname', 'cluster-1', '--plugin', 'plugin-cost@1.0.0=grpc://cost:50051', '--plugin', 'plugin-cost@1.1.0=grpc://cost-11:50051'];
    const noSecret = await ctl(args, { config });
    expect([noSecret.code, noSecret.stderr]).toEqual([2, expect.stringMatching(/PLATFORM_SUPERVISOR_SECRET/)]);
    const published = await json(args, { config, env: { PLATFORM_SUPERVISOR_SECRET: 'supervisor-secret-1' } });
    expect(published).toMatchObject({ name: 'k8s', hostname: 'cluster-1', domain_id: 'domain-local', is_public: false });
    expect(JSON.stringify(published)).not.toContain('supervisor-secret-1');
    expect(await json(['exec', 'get-plugin-endpoint', 'plugin.Plugin', '-p', 'plugin_id=plugin-cost', '-p', 'upgrade_mode=AUTO'], { config })).toEqual({ endpoint: 'grpc://cost-11:50051', updated_version: '1.1.0' });
    expect((await json(['exec', 'list-plugins', 'plugin.Supervisor'], { config })).total_count).toBe(2);
    const bad = await ctl(['publish-supervisor', '--name', 'k8s', '--hostname', 'cluster-1', '--plugin', 'plugin-cost=grpc://x:1'], { config, env: { PLATFORM_SUPERVISOR_SECRET: 'x' } });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/ID@VERSION=grpc/)]);
  });

  it('asks for the password and the MFA code (from standard input when it is not a terminal); a domain login fills domain_id', async () => {
    p.admin('user', 'create', '--domain-id', 'domain-local', '--user-id', 'ops', '--password', 'ops-password-1', '--role-type', 'DOMAIN_ADMIN');
    const { secret } = p.admin('user', 'mfa-enable', '--domain-id', 'domain-local', '--user-id', 'ops') as { secret: string };
    const config = path.join(configDir, 'ops');
    const r = await ctl(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'ops'], { config, input: `ops-password-1\n${totpNow(secret)}\n` });
    expect(JSON.stringify(r.stderr)).toMatch(/^"Password for ops@domain-local: \\nMFA code: \\nLogged in to .* \(DOMAIN\)/);
    expect(r.code).toBe(0);
    // statistics requires domain_id in the body: the CLI takes it from the session.
    expect(await json(['list', 'statistics.Storage'], { config })).toEqual({ results: [], total_count: 0 });

    const noPassword = await ctl(['login', '--endpoint', p.base, '--domain-id', 'domain-local', '--user-id', 'ops'], { config });
    expect([noPassword.code, noPassword.stderr]).toEqual([2, expect.stringMatching(/no password/)]);
  });
});
