import { get as httpGet, createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PoolClient } from 'pg';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { loadConfig } from '../config';
import { createTestInventory } from '../test-support';

/**
 * Export download slots are shared by every tenant of a process (issue #32): one domain holds at most its
 * share of them, and a client that reads slower than the minimum rate loses its slot within a window.
 * Domain A's export is far larger than what the kernel's socket buffers take (about 4 MB on loopback),
 * so a download nobody reads holds its slot, as a stalled client's does.
 */
describe('inventory cloud-service export: download slots are fair across domains', () => {
  let t: Awaited<ReturnType<typeof createTestInventory>>;
  let server: Server;
  let port: number;
  const auth: Record<string, string> = {};
  const opened: IncomingMessage[] = [];

  beforeAll(async () => {
    const bounds = { maxDownloads: 4, maxDownloadsPerDomain: 2, maxDownloadsPerUser: 2, minRate: { bytesPerSecond: 0, windowMs: 0 } };
    t = await createTestInventory({ export: { ...loadConfig().export, ...bounds } });
    for (const [name, domainId] of [['a1', 'dA'], ['a2', 'dA'], ['b1', 'dB']]) {
      auth[name] = await bearer({ domainId, workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: name });
    }
    for (const who of ['a1', 'b1']) {
      const res = await request(t.app)
        .post('/inventory/v1/cloud-service/create')
        .set('Authorization', auth[who])
        .send({ provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', name: 'vm', data: {} });
      expect(res.status).toBe(200);
    }
    // 24 MB of random names in domain A (an Excel file, compressed, is still about half of that).
    await t.deps.pool.query(
      `INSERT INTO cloud_service (domain_id, cloud_service_id, workspace_id, name, provider, cloud_service_group, cloud_service_type, ref_cloud_service_type)
       SELECT 'dA', 'cs-big-' || g, 'ws-1', (SELECT string_agg(md5(random()::text || g || '.' || i), '') FROM generate_series(1, 125) i), 'aws', 'EC2', 'Instance', 'aws.EC2.Instance'
       FROM generate_series(1, 6000) g`,
    );
    server = createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const res of opened.splice(0)) res.destroy();
    // Every download of the test has ended on the server too (its slot is back).
    await waitFor(() => new Promise<boolean>((resolve) => server.getConnections((_e, n) => resolve(n === 0))), 5_000, 'downloads closed');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  const exportUrl = async (who: string, file_format: 'CSV' | 'EXCEL' = 'CSV') => {
    const res = await request(t.app)
      .post('/inventory/v1/cloud-service/export')
      .set('Authorization', auth[who])
      .send({ file_format, options: [{ name: 'x', query_type: 'SEARCH', search_query: { fields: ['name'] } }] });
    expect(res.status).toBe(200);
    return new URL(res.body.download_url).pathname;
  };

  /** A download whose body is not read (its client stalls); its status once the headers arrive. */
  const openUnread = (path: string) =>
    new Promise<{ status: number; res: IncomingMessage; body: () => Promise<string> }>((resolve, reject) => {
      httpGet({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.pause();
        opened.push(res);
        const body = () =>
          new Promise<string>((done, fail) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => done(text));
            res.on('error', fail);
            res.resume();
          });
        resolve({ status: res.statusCode!, res, body });
      }).on('error', reject);
    });
  /** Reads what is left (what the kernel held for the stalled client) and resolves with whether the body came whole. */
  const ended = (res: IncomingMessage) =>
    new Promise<boolean>((resolve) => {
      res.on('close', () => resolve(res.complete));
      res.on('error', () => {});
      res.resume();
    });

  it("lets domain B download while two users of domain A hold unread downloads up to their own bounds", async () => {
    const held = [await openUnread(await exportUrl('a1')), await openUnread(await exportUrl('a1'))];
    expect(held.map((h) => h.status)).toEqual([200, 200]);
    // a2 has a bound of its own left, and the process has two free slots, but domain A has its share.
    for (let i = 0; i < 2; i++) {
      const refused = await openUnread(await exportUrl('a2'));
      expect(refused.status).toBe(429);
      expect(JSON.parse(await refused.body()).error).toMatchObject({ code: 'ERROR_TOO_MANY_EXPORTS', status: 429, message: expect.stringContaining('of your domain') });
    }
    const b = await openUnread(await exportUrl('b1'));
    expect(b.status).toBe(200);
    expect(await b.body()).toBe('name\r\nvm\r\n');
    // Still held: nothing of A's finished, the refusals were the domain bound.
    expect(held.every((h) => !h.res.complete && !h.res.socket.destroyed)).toBe(true);
  });

  it('gives one domain its share and no more when its downloads race (six at once from two users)', async () => {
    const urls = await Promise.all(['a1', 'a1', 'a1', 'a2', 'a2', 'a2'].map((who) => exportUrl(who)));
    const raced = await Promise.all(urls.map((u) => openUnread(u)));
    const statuses = raced.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    expect((await openUnread(await exportUrl('b1'))).status).toBe(200);
  });

  it.each(['CSV', 'EXCEL'] as const)('cuts a %s download whose client reads slower than the minimum rate within the window, and its slot is taken again', async (format) => {
    t.deps.config.export.minRate = { bytesPerSecond: 256 * 1024, windowMs: 300 };
    try {
      const stalled = [await openUnread(await exportUrl('a1', format)), await openUnread(await exportUrl('a2', format))];
      expect(stalled.map((s) => s.status)).toEqual([200, 200]);
      // Later downloads read at full speed: with this tiny window their TCP bursts could look like stalls.
      t.deps.config.export.minRate = { bytesPerSecond: 0, windowMs: 0 };
      // Domain A's slots come back once the server has cut the stalled clients (the Excel writer takes
      // a few seconds to fill the socket buffers first); readers that keep up then get the whole file.
      // Both slots: one comes back with the first client cut, and the second client, opened a moment
      // later, may still be within its window then.
      const urls = [await exportUrl('a1'), await exportUrl('a2')]; // refused with 429 until then, valid for a retry
      const again = [];
      for (const url of urls) {
        again.push(await waitFor(async () => {
          const d = await openUnread(url);
          return d.status === 200 ? d : (await d.body(), undefined);
        }, 25_000, "domain A's slots given back", 200));
      }
      const cut = await Promise.all(stalled.map((s) => ended(s.res)));
      expect(cut).toEqual([false, false]); // the server closed them part-way
      for (const d of again) expect((await d.body()).length).toBe('name\r\n'.length + 'vm\r\n'.length + 6000 * (32 * 125 + 2));
    } finally {
      t.deps.config.export.minRate = { bytesPerSecond: 0, windowMs: 0 };
    }
  }, 60_000);

  it('does not cut a download that waits for the database, not for its client', async () => {
    t.deps.config.export.minRate = { bytesPerSecond: 256 * 1024, windowMs: 200 };
    const url = await exportUrl('b1');
    const lock: PoolClient = await t.deps.pool.connect();
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE cloud_service IN ACCESS EXCLUSIVE MODE');
      const pending = request(t.app).get(url).then((r) => r);
      await new Promise((r) => setTimeout(r, 1_000)); // five windows with nothing to send
      await lock.query('ROLLBACK');
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.text).toBe('name\r\nvm\r\n');
    } finally {
      await lock.query('ROLLBACK').catch(() => {});
      lock.release();
      t.deps.config.export.minRate = { bytesPerSecond: 0, windowMs: 0 };
    }
  });
});
