import request from 'supertest';
import type { PoolClient } from 'pg';
import { bearer, waitFor } from '@platform/testing';
import { loadConfig } from '../config';
import { createTestInventory } from '../test-support';

/**
 * Export downloads hold a database connection while they stream: a process streams a bounded number at
 * once, in all and per requester (export/slots.ts, issue #23). A download is held here by a table lock
 * another connection takes, the way a slow client holds one (its COPY cannot go on).
 */
describe('inventory cloud-service export: concurrent downloads are bounded', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let alice: string;
  let bob: string;
  let carol: string;
  let dave: string;

  beforeAll(async () => {
    t = await createTestInventory({ export: { ...loadConfig().export, maxDownloads: 2, maxDownloadsPerDomain: 1, maxDownloadsPerUser: 1 } });
    alice = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'alice' });
    bob = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'bob' });
    // One domain holds at most one of the two slots here: the others' requesters are of other domains.
    dave = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'dave' });
    carol = await bearer({ domainId: 'd3', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'carol' });
    for (const who of [alice, dave, carol]) {
      const res = await request(t.app)
        .post('/inventory/v1/cloud-service/create')
        .set('Authorization', who)
        .send({ provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', name: 'vm', data: {} });
      expect(res.status).toBe(200);
    }
  });
  afterAll(() => t.close());

  const exportUrl = async (auth: string) => {
    const res = await request(t.app)
      .post('/inventory/v1/cloud-service/export')
      .set('Authorization', auth)
      .send({ file_format: 'CSV', options: [{ name: 'x', query_type: 'SEARCH', search_query: { fields: ['name'] } }] });
    expect(res.status).toBe(200);
    return new URL(res.body.download_url).pathname;
  };
  const get = (path: string) => request(t.app).get(path).then((r) => r);
  const waiting = async (n: number) => {
    for (let i = 0; i < 200; i++) {
      const { rows } = await t.deps.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
      if (rows[0].n >= n) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`fewer than ${n} downloads waiting`);
  };

  it('refuses a second download of the same requester, one past the domain bound and any past the process bound, with 429 in the envelope; the URL works afterwards', async () => {
    const urls = { a1: await exportUrl(alice), a2: await exportUrl(alice), b: await exportUrl(bob), d: await exportUrl(dave), c: await exportUrl(carol) };
    const lock: PoolClient = await t.deps.pool.connect();
    let first: Promise<request.Response>;
    let second: Promise<request.Response>;
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE cloud_service IN ACCESS EXCLUSIVE MODE');
      first = get(urls.a1);
      await waiting(1);
      const again = await get(urls.a2);
      expect(again.status).toBe(429);
      expect(again.body.error).toMatchObject({ code: 'ERROR_TOO_MANY_EXPORTS', status: 429 });
      expect(again.headers['retry-after']).toBe('5');
      const sameDomain = await get(urls.b); // another requester of alice's domain: the domain has its share
      expect(sameDomain.status).toBe(429);
      expect(sameDomain.body.error.message).toContain('of your domain');
      second = get(urls.d); // another domain: a slot of its own
      await waiting(2);
      const full = await get(urls.c);
      expect(full.status).toBe(429);
      expect(full.body.error.code).toBe('ERROR_TOO_MANY_EXPORTS');
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
    }
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    // slots are given back: the refused URLs work now
    for (const u of [urls.a2, urls.b, urls.c]) {
      const res = await get(u);
      expect(res.status).toBe(200);
      expect(res.text).toBe('name\r\nvm\r\n');
    }
  });

  it('gives the slot back when a download fails or the URL is unknown', async () => {
    const unknown = await get('/inventory/v1/cloud-service/export/download/nope');
    expect(unknown.status).toBe(404);
    const url = await exportUrl(alice);
    expect((await get(url)).status).toBe(200);
    expect((await get(url)).status).toBe(200);
  });

  it('refuses an export request past the requester\'s pending exports with 429, before any work; others still export', async () => {
    const t2 = await createTestInventory({ export: { ...loadConfig().export, maxPendingPerUser: 2 } });
    try {
      const call = (auth: string) =>
        request(t2.app)
          .post('/inventory/v1/cloud-service/export')
          .set('Authorization', auth)
          .send({ file_format: 'CSV', options: [{ name: 'x', query_type: 'SEARCH', search_query: { fields: ['name'] } }] });
      expect((await request(t2.app).post('/inventory/v1/cloud-service/create').set('Authorization', alice).send({ provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', name: 'vm', data: {} })).status).toBe(200);
      expect((await call(alice)).status).toBe(200);
      expect((await call(alice)).status).toBe(200);
      const third = await call(alice);
      expect(third.status).toBe(429);
      expect(third.body.error).toMatchObject({ code: 'ERROR_TOO_MANY_EXPORTS', status: 429 });
      expect(third.headers['retry-after']).toBe('60');
      expect((await call(bob)).status).toBe(200);
      // once they expire, the requester exports again
      await t2.deps.pool.query(`UPDATE cloud_service_export SET expires_at = now() - interval '1 second' WHERE user_id = 'alice'`);
      expect((await call(alice)).status).toBe(200);
    } finally {
      await t2.close();
    }
  });

  it("stops a download URL once identity revokes its requester's grant (a role change, a disable), and no other", async () => {
    const alices = await exportUrl(alice);
    const bobs = await exportUrl(bob);
    expect((await get(alices)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2));
    await t.revocations.revokeUser('d1', 'alice');
    await waitFor(async () => (await get(alices)).status === 404, 2000, "alice's URL refused");
    expect((await get(bobs)).status).toBe(200);
    // A URL alice asks for after the revocation works again (her new grant).
    const fresh = await exportUrl(await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'alice' }));
    expect((await get(fresh)).status).toBe(200);
    // A disabled workspace stops every URL of it.
    await new Promise((r) => setTimeout(r, 2));
    await t.revocations.revokeWorkspace('d1', 'ws-1');
    await waitFor(async () => (await get(bobs)).status === 404, 2000, "the workspace's URLs refused");
  });

  it('stops a download URL once the custom role its requester held is disabled (issue #29), and no other', async () => {
    const custom = (userId: string, roleId: string) => bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', roleId, userId, permissions: ['inventory:'] });
    const erins = await exportUrl(await custom('erin', 'role-0000000000e1'));
    const franks = await exportUrl(await custom('frank', 'role-0000000000f2'));
    expect((await get(erins)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2));
    await t.revocations.revokeRole('d1', 'role-0000000000e1');
    await waitFor(async () => (await get(erins)).status === 404, 2000, "erin's URL refused");
    expect((await get(franks)).status).toBe(200);
  });
});

