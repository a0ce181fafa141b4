import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import type { WebhookSource } from './webhook-copy';

/** The copy's writes are ordered by revision; a tombstone is final; a republish neither undoes a newer write nor keeps a webhook gone. */
describe('the webhooks’ copy in Redis', () => {
  let t: TestMonitoring;
  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
  });
  afterAll(() => t.close());

  const source = (over: Partial<WebhookSource>): WebhookSource => ({
    webhook_id: 'webhook-copy-1',
    name: 'n',
    domain_id: 'd1',
    workspace_id: 'ws-1',
    project_id: 'project-1',
    state: 'ENABLED',
    access_key: 'k',
    plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook', version: '1.2.0', options: {}, metadata: {}, upgrade_mode: 'AUTO' },
    revision: 0,
    ...over,
  });
  const copy = () => t.deps.webhookCopy;

  it('keeps the newest revision whatever the order of the writes; a deleted webhook stays deleted', async () => {
    await copy().republish(); // the copy is complete
    await copy().put(source({ revision: 2, state: 'DISABLED' }));
    await copy().put(source({ revision: 1, state: 'ENABLED' }));
    expect((await copy().get('webhook-copy-1'))?.state).toBe('DISABLED');
    await copy().put(source({ revision: 3, state: 'ENABLED', name: 'renamed' }));
    expect(await copy().get('webhook-copy-1')).toMatchObject({ state: 'ENABLED', name: 'renamed', domain_id: 'd1', project_id: 'project-1' });
    await copy().remove({ webhook_id: 'webhook-copy-1', revision: 4 });
    await copy().put(source({ revision: 9 }));
    expect(await copy().get('webhook-copy-1')).toBeNull();
  });

  it('a republish writes what PostgreSQL has, keeps a newer write, drops what PostgreSQL no longer has, and marks the copy complete', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const created = await request(t.app)
      .post('/monitoring/v1/webhook/create')
      .set('Authorization', owner)
      .send({ name: 'r', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' });
    const [a, b] = [created.body, (await request(t.app).post('/monitoring/v1/webhook/create').set('Authorization', owner).send({ name: 'r2', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })).body];
    const key = `${t.deps.redisPrefix}monitoring:webhooks`;
    // As if: `a` was disabled by a replica after the republish below read PostgreSQL (a newer revision);
    // `b`'s entry lost; a webhook deleted while no replica could write its tombstone.
    await copy().put(source({ webhook_id: a.webhook_id, access_key: a.access_key, revision: 5, state: 'DISABLED' }));
    await t.deps.redis.hdel(key, b.webhook_id);
    await copy().put(source({ webhook_id: 'webhook-ghost', revision: 0 }));
    await t.deps.redis.hdel(key, '_');
    await expect(copy().get(a.webhook_id)).rejects.toThrow(/unavailable/);

    await copy().republish();
    expect((await copy().get(a.webhook_id))?.state).toBe('DISABLED');
    expect(await copy().get(b.webhook_id)).toMatchObject({ state: 'ENABLED', name: 'r2' });
    expect(await copy().get('webhook-ghost')).toBeNull();
    expect(await t.deps.redis.hexists(key, 'webhook-ghost')).toBe(0);
    const entry = (await t.deps.redis.hget(key, b.webhook_id))!;
    expect(entry).not.toContain(b.access_key);
  });
});
