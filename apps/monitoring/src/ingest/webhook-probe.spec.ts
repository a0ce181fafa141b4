import { readFileSync } from 'node:fs';
import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { IngestService, sameKey } from './service';
import { DeliveryEnqueuer } from './enqueue';
import { WebhookCache } from './webhook-cache';

/**
 * A known webhook id with a wrong key and an unknown id cost the same (issue #32): the same reads and
 * the same comparisons, whether the known webhook is cached or not; no timing is asserted, the work is.
 */
describe('monitoring webhook ingestion: a wrong key and an unknown id do the same work', () => {
  let t: TestMonitoring;
  let webhook: { webhook_id: string; access_key: string; webhook_url: string };

  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false, ingest: { webhookCacheMs: 60_000 } });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const res = await request(t.app)
      .post('/monitoring/v1/webhook/create')
      .set('Authorization', owner)
      .send({ name: 'probed', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook', options: {} }, project_id: 'project-1' });
    expect(res.status).toBe(200);
    webhook = res.body;
  });
  afterAll(() => t.close());

  /** The webhook lookups the app's pool runs while `fn` runs. */
  const lookups = async (fn: () => Promise<unknown>) => {
    const spy = jest.spyOn(t.deps.pool, 'query');
    try {
      await fn();
      return spy.mock.calls.filter(([q]) => String(typeof q === 'string' ? q : (q as { text?: string }).text).includes('FROM webhook WHERE webhook_id')).length;
    } finally {
      spy.mockRestore();
    }
  };
  const post = (path: string) => request(t.app).post(path).send({ alerts: [] });
  const path = (id: string, key: string) => new URL(webhook.webhook_url).pathname.replace(webhook.webhook_id, id).replace(webhook.access_key, key);

  it('reads the store once for a wrong key to a cached webhook, as for an unknown id, and answers both alike', async () => {
    // The webhook is cached (a right delivery just went through), as an active one is.
    expect((await post(path(webhook.webhook_id, webhook.access_key))).status).toBe(200);
    expect(await lookups(() => post(path(webhook.webhook_id, webhook.access_key)))).toBe(0); // the right key: from the cache
    let wrong: request.Response | undefined;
    let unknown: request.Response | undefined;
    const wrongReads = await lookups(async () => (wrong = await post(path(webhook.webhook_id, 'not-the-key'))));
    const unknownReads = await lookups(async () => (unknown = await post(path('webhook-0123456789ab', 'not-the-key'))));
    expect([wrongReads, unknownReads]).toEqual([1, 1]);
    expect(wrong!.status).toBe(403);
    expect(unknown!.body).toEqual(wrong!.body);
    // The unknown id is not cached either: a second probe of each reads again.
    expect(await lookups(() => post(path('webhook-0123456789ab', 'not-the-key')))).toBe(1);
    expect(await lookups(() => post(path(webhook.webhook_id, 'not-the-key')))).toBe(1);
  });

  it("the module's README says what an unknown id answers: the wrong key's 403", async () => {
    const unknown = await post(path('webhook-0123456789ab', 'not-the-key'));
    expect(unknown.status).toBe(403);
    const readme = readFileSync(`${__dirname}/../../README.md`, 'utf8');
    const ingestion = readme.slice(readme.indexOf('## Ingestion'), readme.indexOf('\n## ', readme.indexOf('## Ingestion') + 1));
    expect(ingestion).toMatch(/unknown webhook id[^.]*answer the same 403 `ERROR_PERMISSION_DENIED`/);
    expect(ingestion).not.toMatch(/\b404\b/);
  });

  it('compares the key twice on both paths, against a dummy digest where there is no webhook', async () => {
    const cache = new WebhookCache(t.deps.pool, { ttlMs: 60_000 }, t.deps.webhookCopy);
    const enqueuer = new DeliveryEnqueuer(t.deps.queue, t.deps.pool, { timeoutMs: 1000, maxBatch: 1, maxBatchBytes: 1 << 20 }, t.deps.logger, t.deps.queueReady);
    const digests: Buffer[] = [];
    const ingest = new IngestService(cache, enqueuer, t.deps.logger, (given, digest) => {
      digests.push(digest);
      return sameKey(given, digest);
    });
    const real = (await cache.get(webhook.webhook_id))!.key_digest; // cached now
    const refusal = async (id: string) => {
      digests.length = 0;
      await expect(ingest.authorize(id, 'not-the-key')).rejects.toMatchObject({ status: 403, code: 'ERROR_PERMISSION_DENIED' });
      return [...digests];
    };
    const known = await refusal(webhook.webhook_id);
    const unknown = await refusal('webhook-0123456789ab');
    expect(known).toEqual([real, real]);
    expect(unknown).toHaveLength(2);
    const dummy = unknown[0];
    expect(unknown[1]).toEqual(dummy);
    expect(dummy.length).toBe(real.length);
    expect(dummy.equals(real)).toBe(false);
    // The right key, cached: one comparison and no read.
    digests.length = 0;
    await expect(ingest.authorize(webhook.webhook_id, webhook.access_key)).resolves.toMatchObject({ webhook_id: webhook.webhook_id });
    expect(digests).toEqual([real]);
  });
});
