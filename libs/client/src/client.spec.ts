import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startPlatform, totpNow, type Platform } from '@platform/testing';
import { fetchOpenApiDocs } from './docs-source';
import { PlatformApiError, PlatformClient, PlatformConnectionError, findResource, resourceTable, tokenExpiry, type Session } from './index';

/**
 * The client against the real apps (built and started as production runs them, ports shifted by
 * CLIENT_TEST_PORT_OFFSET, their own Redis database): login, refresh, typed errors, and the check that
 * the committed generated types are those of the apps' current OpenAPI documents.
 */
const root = path.resolve(__dirname, '../../..');
const PASSWORD = 'e2e-admin-password'; // startPlatform's BOOTSTRAP_PASSWORD

describe('@platform/client against the apps', () => {
  let p: Platform;
  /** identity's URL stands for the gateway here: each app serves its own paths. */
  const endpointOf = (path: string) => p.urlOf(path.split('/')[1]);
  /** Routes each operation to its app, as the gateway does (the apps run without one here). */
  const routed: typeof fetch = (input, init) => {
    const url = new URL(String(input));
    const target = new URL(endpointOf(url.pathname));
    url.host = target.host;
    return fetch(url, init);
  };
  const client = (o: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) => new PlatformClient({ endpoint: 'http://platform.test', fetch: routed, ...o });

  beforeAll(async () => {
    p = await startPlatform({
      portOffset: Number(process.env.CLIENT_TEST_PORT_OFFSET || 14_000),
      redisUrl: process.env.CLIENT_TEST_REDIS_URL || 'redis://127.0.0.1:6379/6',
      label: 'client',
    });
  }, 180_000);
  afterAll(async () => {
    await p?.stop();
  }, 60_000);

  it('has generated types that match the apps\' OpenAPI documents (npm run client:generate refreshes them)', async () => {
    // The generator runs in plain node (openapi-typescript loads ES modules Jest cannot), on the apps' documents.
    const docs = path.join(p.dir, 'openapi-docs.json');
    const current = await fetchOpenApiDocs(p.apps, p.urlOf);
    writeFileSync(docs, JSON.stringify(current));
    const check = () => spawnSync(process.execPath, [path.join(root, 'libs/client/generate.mjs'), '--docs', docs, '--check'], { cwd: root, encoding: 'utf8' });
    const fresh = check();
    expect(fresh.stderr).toBe('');
    expect(fresh.status).toBe(0);
    // and an operation added to a document makes them stale
    const paths = current.identity.paths!;
    const del = paths['/identity/v2/project-group/delete'] as { post: { operationId: string } };
    paths['/identity/v2/project-group/archive'] = { post: { ...del.post, operationId: 'identity_v2_project_group_archive' } };
    writeFileSync(docs, JSON.stringify(current));
    const stale = check();
    expect(stale.stderr).toMatch(/stale generated client files: identity\.ts, index\.ts/);
    expect(stale.status).toBe(1);
  }, 60_000);

  it("passes spectral's oas and Redocly's recommended rulesets with 0 problems, and hey-api's clients compile under strict", async () => {
    const docs = path.join(p.dir, 'openapi-docs-lint.json');
    const current = await fetchOpenApiDocs(p.apps, p.urlOf);
    writeFileSync(docs, JSON.stringify(current));
    const lint = (extra: string[] = []) => spawnSync(process.execPath, [path.join(root, 'libs/client/scripts/lint-docs.mjs'), '--docs', docs, ...extra], { cwd: root, encoding: 'utf8' });
    const clean = lint();
    expect(clean.stderr).toBe('');
    expect(clean.status).toBe(0);
    // an operation without a description or tag, and no contact, are found
    const identity = current.identity as { info: Record<string, unknown>; paths: Record<string, { post: Record<string, unknown> }> };
    delete identity.info.contact;
    delete identity.paths['/identity/v2/project-group/get'].post.description;
    writeFileSync(docs, JSON.stringify(current));
    const broken = lint(['--no-clients']);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain('spectral identity: info-contact');
    expect(broken.stderr).toContain('spectral identity: operation-description');
  }, 180_000);

  it('logs in (issue + grant), keeps the session and runs typed operations', async () => {
    const sessions: Session[] = [];
    const c = client({ onSession: (s) => void sessions.push(s) });
    const session = await c.login({ domainId: 'domain-local', userId: 'admin', password: PASSWORD, workspaceId: 'workspace-local' });
    expect(session).toMatchObject({ domain_id: 'domain-local', user_id: 'admin', workspace_id: 'workspace-local', scope: 'WORKSPACE' });
    expect(session.refresh_token).toEqual(expect.any(String));
    expect(sessions).toHaveLength(1);

    const created = await c.call('/identity/v2/project-group/create', { name: 'from-the-client', tags: { team: 'sdk' } });
    expect(created).toMatchObject({ name: 'from-the-client', workspace_id: 'workspace-local' });
    const list = await c.call('/identity/v2/project-group/list', { name: 'from-the-client' });
    expect(list.total_count).toBe(1);

    // A DOMAIN-scoped session, as a domain admin's calls to statistics need.
    const domain = client();
    expect((await domain.login({ domainId: 'domain-local', userId: 'admin', password: PASSWORD })).scope).toBe('DOMAIN');
    expect(await domain.call('/statistics/v1/storage/list', { domain_id: 'domain-local' })).toMatchObject({ total_count: 0 });
  });

  it('throws every failure as a PlatformApiError with the envelope', async () => {
    const c = client();
    await c.login({ domainId: 'domain-local', userId: 'admin', password: PASSWORD, workspaceId: 'workspace-local' });
    const missing = await c.call('/identity/v2/project-group/get', { project_group_id: 'pg-000000000000' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PlatformApiError);
    expect(missing).toMatchObject({ status: 404, code: 'ERROR_NOT_FOUND', envelope: { error: { code: 'ERROR_NOT_FOUND', status: 404 } } });
    expect((missing as PlatformApiError).requestId).toEqual(expect.any(String));

    const wrong = await client().login({ domainId: 'domain-local', userId: 'admin', password: 'not-the-password' }).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401, code: 'ERROR_AUTHENTICATE_FAILURE' });

    const anonymous = await client().call('/inventory/v1/cloud-service/list', {}).catch((e: unknown) => e);
    expect(anonymous).toMatchObject({ status: 401, code: 'ERROR_AUTHENTICATE_FAILURE' });

    const nowhere = await new PlatformClient({ endpoint: 'http://127.0.0.1:1' }).call('/identity/v1/endpoint/list', {}).catch((e: unknown) => e);
    expect(nowhere).toBeInstanceOf(PlatformConnectionError);
  });

  it('refreshes the access token before it expires, and after the platform refused it', async () => {
    const sessions: Session[] = [];
    // A margin longer than the token's life: every call finds it about to expire.
    const c = client({ accessTimeoutSeconds: 120, refreshMarginSeconds: 600, onSession: (s) => void sessions.push(s) });
    const first = await c.login({ domainId: 'domain-local', userId: 'admin', password: PASSWORD, workspaceId: 'workspace-local' });
    const exp = tokenExpiry(first.access_token)!;
    expect(exp - Date.now() / 1000).toBeLessThanOrEqual(120);
    await c.call('/identity/v2/project-group/list', {});
    await c.call('/identity/v2/project-group/list', {});
    expect(sessions).toHaveLength(3); // the login's grant and one per call

    // A session whose access token the platform refuses (revoked, or signed by an old key): one grant, then the call.
    const later: Session[] = [];
    const kept = client({ session: { ...first, access_token: 'not-a-token' }, onSession: (s) => void later.push(s) });
    expect(await kept.call('/identity/v2/project-group/list', {})).toMatchObject({ total_count: expect.any(Number) });
    expect(later).toHaveLength(1);
    expect(later[0].access_token).not.toBe('not-a-token');
  });

  it('asks for the MFA code when identity wants one', async () => {
    p.admin('user', 'create', '--domain-id', 'domain-local', '--user-id', 'mfa-user', '--password', 'mfa-user-password-1', '--role-type', 'WORKSPACE_OWNER', '--workspace-id', 'workspace-local');
    const { secret } = p.admin('user', 'mfa-enable', '--domain-id', 'domain-local', '--user-id', 'mfa-user') as { secret: string };
    const without = await client().login({ domainId: 'domain-local', userId: 'mfa-user', password: 'mfa-user-password-1', workspaceId: 'workspace-local' }).catch((e: unknown) => e);
    expect(without).toMatchObject({ code: 'ERROR_MFA_REQUIRED' });
    let asked = 0;
    const session = await client().login({
      domainId: 'domain-local',
      userId: 'mfa-user',
      password: 'mfa-user-password-1',
      workspaceId: 'workspace-local',
      mfaCode: async () => (asked++, totpNow(secret)),
    });
    expect(asked).toBe(1);
    expect(session.user_id).toBe('mfa-user');
  });

  it('names resources <module>.<Resource> from the operation paths', () => {
    const table = resourceTable();
    expect([...table.keys()]).toEqual(expect.arrayContaining(['identity.ProjectGroup', 'identity.Token', 'identity.Endpoint', 'inventory.CloudService', 'cost-analysis.UnifiedCost', 'monitoring.Webhook']));
    const pg = table.get('identity.ProjectGroup')!;
    expect(pg.verbs.get('change-parent-group')).toBe('/identity/v2/project-group/change-parent-group');
    expect(findResource(table, 'identity.project-group')?.name).toBe('identity.ProjectGroup');
    expect(findResource(table, 'identity.Nothing')).toBeUndefined();
    // the newest version of a resource wins
    expect(resourceTable(['/x/v1/thing/get', '/x/v2/thing/list']).get('x.Thing')!.verbs).toEqual(new Map([['list', '/x/v2/thing/list']]));
  });
});

/** Checked by the type-checker only (never run): bodies and answers are typed by the documents. */
export async function typeChecks(c: PlatformClient) {
  // @ts-expect-error name must be a string
  await c.call('/identity/v2/project-group/create', { name: 1 });
  // @ts-expect-error not an operation
  await c.call('/identity/v2/project-group/explode', {});
  // @ts-expect-error unknown field (the request schemas are strict)
  await c.call('/identity/v2/project-group/create', { name: 'x', colour: 'red' });
  const r = await c.call('/inventory/v1/cloud-service/list', { query: { page: { limit: 1 } } });
  // Answers are typed by the response schemas: the fields of an Info exist with their types, each
  // optional, since `only` / `query.minimal` may cut an Info to some fields (docs/decisions/api.md).
  const group = await c.call('/identity/v2/project-group/create', { name: 'x' });
  const groupId: string = group.project_group_id ?? '';
  const users: string[] | undefined = group.users;
  // @ts-expect-error a field the answer does not have
  void group.colour;
  // @ts-expect-error project_group_id is a string
  const asNumber: number = group.project_group_id;
  const groups = await c.call('/identity/v2/project-group/list', {});
  const total: number = groups.total_count;
  const firstId: string | undefined = groups.results[0]?.project_group_id;
  const listed: string | undefined = r.results[0].cloud_service_id;
  const deleted: Record<string, unknown> = await c.call('/identity/v2/project-group/delete', { project_group_id: groupId });
  const stat = await c.call('/identity/v2/project-group/stat', { query: {} });
  const more: boolean | undefined = stat.more;
  return { r, groupId, users, asNumber, total, firstId, listed, deleted, more };
}
