import { createPublicKey } from 'node:crypto';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { TokenVerifier } from '@platform/auth';
import { AccessRevocations } from '@platform/directory';
import { bearer, testKeys } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

/**
 * Issue #27 (HIGH): a token/grant racing a revoking change must never give a token that outlives the
 * change. Four loops of grants (at most LOOP_MAX each) run while an admin makes each revoking change;
 * afterwards every token granted is tried on a protected route: none that rests on the old state works.
 */
const LOOPS = 4;
const LOOP_MAX = 60;
const AFTER = 6; // grants each loop still tries once the change has answered

describe('identity: revocations no grant can outrun', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  /** Another module's verifier (its own process in production): the revocations reach it through Redis. */
  let otherModule: TokenVerifier;
  let otherRevocations: AccessRevocations;
  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1']);
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherRevocations = new AccessRevocations(t.deps.redis, { prefix: t.deps.redisPrefix });
    await otherRevocations.start();
    otherModule = new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(otherRevocations);
  });
  afterAll(async () => {
    otherRevocations.stop();
    await t.close();
  });

  const call = (path: string, auth: string, body: object) => request(t.app).post(`/identity/v2/${path}`).set('Authorization', auth).send(body);
  const grant = (refresh: string, workspaceId: string) =>
    request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: refresh, scope: 'WORKSPACE', workspace_id: workspaceId });

  /** A new user, WORKSPACE_OWNER of a new workspace, logged in: their refresh token and binding. */
  async function subject(name: string) {
    const ws = `ws-${name}`;
    await t.admin.createWorkspace({ domainId: 'd1', workspaceId: ws, name: ws });
    await t.admin.createUser({ domainId: 'd1', userId: name, password: 'password-1', roleType: 'WORKSPACE_OWNER', workspaceId: ws });
    const login = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: name, password: 'password-1' }, domain_id: 'd1' });
    expect(login.status).toBe(200);
    const binding = await t.prisma.roleBinding.findFirstOrThrow({ where: { domain_id: 'd1', user_id: name, workspace_id: ws } });
    return { ws, refresh: login.body.refresh_token as string, bindingId: binding.role_binding_id };
  }

  /** Races LOOPS grant loops against `change`; answers every access token granted. */
  async function race(refresh: string, ws: string, change: () => Promise<request.Response>) {
    const tokens: string[] = [];
    let changed = false;
    let started = 0;
    const loop = async () => {
      let after = 0;
      for (let i = 0; i < LOOP_MAX && after < AFTER; i++) {
        if (changed) after++;
        const res = await grant(refresh, ws);
        started++;
        if (res.status === 200) tokens.push(res.body.access_token);
      }
    };
    const loops = Array.from({ length: LOOPS }, loop);
    while (started < LOOPS * 2) await new Promise((r) => setImmediate(r));
    const res = await change();
    changed = true;
    expect(res.status).toBe(200);
    await Promise.all(loops);
    return tokens;
  }

  /** The tokens identity's protected route, or another module's verifier, still accepts. */
  async function survivors(tokens: string[], rests: (claims: Record<string, unknown>) => boolean = () => true) {
    const alive: string[] = [];
    for (const token of tokens) {
      const res = await call('project-group/list', `Bearer ${token}`, {});
      const elsewhere = await otherModule.authenticate(token).then(
        () => true,
        () => false,
      );
      if ((res.status === 200 || elsewhere) && rests(decodeJwt(token))) alive.push(token);
      else if (res.status !== 200) expect(res.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    }
    return alive;
  }

  const cases: [string, (s: Awaited<ReturnType<typeof subject>>, name: string) => Promise<request.Response>][] = [
    ['user/disable', (_s, name) => call('user/disable', admin, { user_id: name })],
    ['user/delete', (_s, name) => call('user/delete', admin, { user_id: name })],
    ['user/update with a new password', (_s, name) => call('user/update', admin, { user_id: name, password: 'password-2-new' })],
    ['role-binding/delete', (s) => call('role-binding/delete', admin, { role_binding_id: s.bindingId })],
    ['workspace/disable', (s) => call('workspace/disable', admin, { workspace_id: s.ws })],
  ];

  it.each(cases)('%s: no token granted during the change survives it', async (label, change) => {
    const name = `race-${label.split(/[/ ]/)[0]}-${label.length}`;
    const s = await subject(name);
    const tokens = await race(s.refresh, s.ws, () => change(s, name));
    expect(tokens.length).toBeGreaterThan(0); // the race really granted tokens
    expect(await survivors(tokens)).toEqual([]);
  });

  it('role-binding/update-role: no token granted during a demotion still acts as WORKSPACE_OWNER', async () => {
    const s = await subject('race-demoted');
    const tokens = await race(s.refresh, s.ws, () => call('role-binding/update-role', admin, { role_binding_id: s.bindingId, role_id: 'managed-workspace-member' }));
    expect(tokens.filter((x) => decodeJwt(x).role_type === 'WORKSPACE_OWNER').length).toBeGreaterThan(0);
    expect(await survivors(tokens, (c) => c.role_type === 'WORKSPACE_OWNER')).toEqual([]);
    // A grant after the change gets the new role, and it works.
    const after = await grant(s.refresh, s.ws);
    expect(after.body.role_type).toBe('WORKSPACE_MEMBER');
    expect((await call('project-group/list', `Bearer ${after.body.access_token}`, {})).status).toBe(200);
  });

  /** A subject whose binding names a new custom WORKSPACE_OWNER role (permissions `identity:`): its id. */
  async function customRoleSubject(name: string) {
    const s = await subject(name);
    const created = await call('role/create', admin, { name: `role of ${name}`, role_type: 'WORKSPACE_OWNER', permissions: ['identity:'] });
    expect(created.status).toBe(200);
    expect((await call('role-binding/update-role', admin, { role_binding_id: s.bindingId, role_id: created.body.role_id })).status).toBe(200);
    return { ...s, roleId: created.body.role_id as string };
  }

  it('role/disable: no token granted with the role during the disable survives it', async () => {
    const s = await customRoleSubject('race-role-off');
    const tokens = await race(s.refresh, s.ws, () => call('role/disable', admin, { role_id: s.roleId }));
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((x) => decodeJwt(x).role_id === s.roleId)).toBe(true);
    expect(await survivors(tokens)).toEqual([]);
    expect((await grant(s.refresh, s.ws)).status).toBe(403);
  });

  it('role/update with new permissions: no token granted with the old permissions survives it', async () => {
    const s = await customRoleSubject('race-role-perms');
    const tokens = await race(s.refresh, s.ws, () => call('role/update', admin, { role_id: s.roleId, permissions: ['identity:ProjectGroup'] }));
    const old = (c: Record<string, unknown>) => JSON.stringify(c.permissions) === JSON.stringify(['identity:']);
    expect(tokens.filter((x) => old(decodeJwt(x))).length).toBeGreaterThan(0);
    expect(await survivors(tokens, old)).toEqual([]);
    const after = await grant(s.refresh, s.ws);
    expect(decodeJwt(after.body.access_token).permissions).toEqual(['identity:ProjectGroup']);
  });

  it('a binding change ends only the tokens of that user in that workspace: an owner ends no one\'s tokens elsewhere (LOW, owners)', async () => {
    await t.admin.createWorkspace({ domainId: 'd1', workspaceId: 'ws-else', name: 'else' });
    await t.admin.createUser({ domainId: 'd1', userId: 'boss', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
    await t.admin.createUser({ domainId: 'd1', userId: 'two-ws', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-else' });
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    const tokensOf = async (user: string, scopes: [string, string?][]) => {
      const login = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: user, password: 'password-1' }, domain_id: 'd1' });
      const out: Record<string, string> = { USER: login.body.access_token };
      for (const [scope, ws] of scopes) {
        const res = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: login.body.refresh_token, scope, workspace_id: ws });
        expect(res.status).toBe(200);
        out[ws ?? scope] = res.body.access_token;
      }
      return { refresh: login.body.refresh_token as string, tokens: out };
    };
    const works = async (token: string) => (await call('role/list', `Bearer ${token}`, {})).status !== 401;
    // boss is DOMAIN_ADMIN: their ws-1 token comes from that role, and no ws-1 binding's change ends it.
    const boss = await tokensOf('boss', [['DOMAIN'], ['WORKSPACE', 'ws-else'], ['WORKSPACE', 'ws-1']]);
    const other = await tokensOf('two-ws', [['WORKSPACE', 'ws-else']]);
    // The owner binds both into ws-1, then changes and deletes those bindings.
    for (const user of ['boss', 'two-ws']) {
      const b = await call('role-binding/create', owner, { user_id: user, role_id: 'managed-workspace-member', resource_group: 'WORKSPACE' });
      expect(b.status).toBe(200);
      const inWs1 = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: (user === 'boss' ? boss : other).refresh, scope: 'WORKSPACE', workspace_id: 'ws-1' });
      expect((await call('role-binding/update-role', owner, { role_binding_id: b.body.role_binding_id, role_id: 'managed-workspace-owner' })).status).toBe(200);
      expect((await call('role-binding/delete', owner, { role_binding_id: b.body.role_binding_id })).status).toBe(200);
      if (user === 'two-ws') expect(await works(inWs1.body.access_token)).toBe(false); // what the binding gave ends
    }
    for (const token of [...Object.values(boss.tokens), ...Object.values(other.tokens)]) expect(await works(token)).toBe(true);
  });

  it('token/issue racing a new password or a disable: nothing issued from the old state survives, access or refresh', async () => {
    for (const [user, change] of [
      ['race-issue-pw', (u: string) => call('user/update', admin, { user_id: u, password: 'password-3-new' })],
      ['race-issue-off', (u: string) => call('user/disable', admin, { user_id: u })],
    ] as const) {
      await t.admin.createUser({ domainId: 'd1', userId: user, password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-1' });
      const issued: { access_token: string; refresh_token: string }[] = [];
      let changed = false;
      let started = 0;
      const loop = async () => {
        for (let i = 0, after = 0; i < 8 && after < 2; i++) {
          if (changed) after++;
          started++;
          const res = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: user, password: 'password-1' }, domain_id: 'd1' });
          if (res.status === 200) issued.push(res.body);
        }
      };
      const loops = Array.from({ length: 2 }, loop);
      while (issued.length < 1 && started < 16) await new Promise((r) => setTimeout(r, 5));
      expect((await change(user)).status).toBe(200);
      changed = true;
      await Promise.all(loops);
      expect(issued.length).toBeGreaterThan(0);
      for (const tokens of issued) {
        expect((await request(t.app).post('/identity/v1/endpoint/list').set('Authorization', `Bearer ${tokens.access_token}`).send({})).status).toBe(401);
        expect((await grant(tokens.refresh_token, 'ws-1')).status).toBe(401);
      }
    }
  });
});
