import request from 'supertest';
import Redis from 'ioredis';
import { createLogger } from '@platform/core';
import { EndpointChanges, pluginDatabaseUrl, PluginEndpointResolver, tableSource, watchPluginEndpoints, type EndpointSource } from '@platform/plugin';
import { bearer, waitFor } from '@platform/testing';
import { createTestPlugin } from './test-support';

/**
 * libs/plugin PluginEndpointResolver against the plugin app's real database and real Redis: two
 * resolvers stand for two replicas of a module; a publish through the app reaches both at once.
 */
describe('endpoint resolver: cache per (domain, plugin_id, version), dropped on every publish', () => {
  let t: Awaited<ReturnType<typeof createTestPlugin>>;
  let admin: string;
  const resolvers: PluginEndpointResolver[] = [];
  let reads = 0;
  const counting = (): EndpointSource => {
    const table = tableSource(t.db.pool);
    return { candidates: (d, p) => (reads++, table.candidates(d, p)) };
  };
  const resolver = async (source = counting(), o = {}) => {
    const r = new PluginEndpointResolver(t.redis.redis, source, { prefix: t.redis.prefix, ...o });
    resolvers.push(r);
    await r.start();
    return r;
  };
  beforeAll(async () => {
    t = await createTestPlugin();
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
  });
  afterAll(async () => {
    for (const r of resolvers) r.stop();
    await t.close();
  });

  const publish = (hostname: string, plugins: [string, string, string][]) =>
    request(t.app)
      .post('/plugin/v1/supervisor/publish')
      .set('Authorization', admin)
      .send({ name: hostname, hostname, secret_key: `secret-of-${hostname}`, plugin_info: plugins.map(([plugin_id, version, endpoint]) => ({ plugin_id, version, state: 'ACTIVE', endpoint })) })
      .expect(200);
  const ask = (r: PluginEndpointResolver, pluginId = 'plugin-a', version = '1.0.0', upgradeMode: 'AUTO' | 'MANUAL' = 'AUTO') =>
    r.resolve({ domainId: 'd1', pluginId, version, upgradeMode }).then(
      (x) => x.endpoint,
      (e: { code?: string }) => e.code ?? 'error',
    );

  it('a publish in one replica reaches the other at once; answers are cached in between', async () => {
    const [a, b] = [await resolver(), await resolver()];
    await publish('host-1', [['plugin-a', '1.0.0', 'grpc://a-1:1']]);
    expect([await ask(a), await ask(b)]).toEqual(['grpc://a-1:1', 'grpc://a-1:1']);
    const before = reads;
    expect([await ask(a), await ask(b), await ask(a)]).toEqual(['grpc://a-1:1', 'grpc://a-1:1', 'grpc://a-1:1']);
    expect(reads).toBe(before); // from memory
    await publish('host-1', [['plugin-a', '1.1.0', 'grpc://a-2:1']]);
    await waitFor(async () => (await ask(a)) === 'grpc://a-2:1' && (await ask(b)) === 'grpc://a-2:1', 1000, 'the new endpoint in both', 5);
    expect(await ask(a, 'plugin-a', '1.0.0', 'MANUAL')).toBe('ERROR_NOT_FOUND');
  });

  it("takes a version's endpoints[] in turn, from the cache as from the table", async () => {
    const r = await resolver();
    const endpoints = ['grpc://rr-1:1', 'grpc://rr-2:1'];
    await request(t.app)
      .post('/plugin/v1/supervisor/publish')
      .set('Authorization', admin)
      .send({ name: 'rr', hostname: 'host-rr', secret_key: 'secret-of-host-rr', plugin_info: [{ plugin_id: 'plugin-rr', version: '1.0.0', state: 'ACTIVE', endpoint: 'grpc://rr-0:1', endpoints }] })
      .expect(200);
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push(await ask(r, 'plugin-rr'));
    expect(seen).toEqual(['grpc://rr-1:1', 'grpc://rr-2:1', 'grpc://rr-1:1', 'grpc://rr-2:1', 'grpc://rr-1:1']);
  });

  it('a deregister reaches every replica; another domain’s or another plugin’s change keeps the entry', async () => {
    const [a, b] = [await resolver(), await resolver()];
    await publish('host-2', [['plugin-b', '2.0.0', 'grpc://b:1']]);
    expect([await ask(a, 'plugin-b'), await ask(b, 'plugin-b')]).toEqual(['grpc://b:1', 'grpc://b:1']);
    const changes = new EndpointChanges(t.redis.redis, t.redis.prefix);
    await changes.announce({ domainId: 'd2', pluginIds: ['plugin-b'] });
    await changes.announce({ domainId: 'd1', pluginIds: ['plugin-z'] });
    await new Promise((r) => setTimeout(r, 50));
    const before = reads;
    await ask(a, 'plugin-b');
    expect(reads).toBe(before);
    const list = await request(t.app).post('/plugin/v1/supervisor/list').set('Authorization', admin).send({ name: 'host-2' });
    await request(t.app).post('/plugin/v1/supervisor/deregister').set('Authorization', admin).send({ supervisor_id: list.body.results[0].supervisor_id }).expect(200);
    await waitFor(async () => (await ask(a, 'plugin-b')) === 'ERROR_NOT_FOUND' && (await ask(b, 'plugin-b')) === 'ERROR_NOT_FOUND', 1000, 'the endpoint gone in both', 5);
  });

  it('a lost subscription drops the cache and caches nothing until it is back', async () => {
    const a = await resolver();
    await publish('host-3', [['plugin-c', '1.0.0', 'grpc://c:1']]);
    await ask(a, 'plugin-c');
    expect(a.size).toBeGreaterThan(0);
    await killClient(t.redis.redis, a.connectionName);
    await waitFor(() => !a.caching, 2000, 'the subscription lost', 5);
    expect(a.size).toBe(0);
    await waitFor(() => a.caching, 10_000, 'the subscription back', 20);
    // a change announced after the reconnection still arrives
    await ask(a, 'plugin-c');
    await publish('host-3', [['plugin-c', '1.0.0', 'grpc://c-moved:1']]);
    await waitFor(async () => (await ask(a, 'plugin-c')) === 'grpc://c-moved:1', 1000, 'the moved endpoint', 5);
  });

  it('a read that was under way when a change arrived is not cached', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const table = tableSource(t.db.pool);
    let slowReads = 0;
    const a = await resolver({ candidates: async (d, p) => (slowReads++, await gate, table.candidates(d, p)) });
    const first = ask(a, 'plugin-d');
    await publish('host-4', [['plugin-d', '1.0.0', 'grpc://d:1']]);
    await new Promise((r) => setTimeout(r, 50)); // the change's message arrives while the read waits
    release();
    expect(await first).toBe('grpc://d:1');
    await ask(a, 'plugin-d');
    expect(slowReads).toBe(2); // the first answer was not kept: read again
    await ask(a, 'plugin-d');
    expect(slowReads).toBe(2);
  });

  it('with Redis unreachable at start, a module still resolves (from the table, every time) and caches nothing', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 1000 });
    down.on('error', () => {});
    await publish('host-6', [['plugin-f', '1.0.0', 'grpc://f:1']]);
    const before = reads;
    const a = watchPluginEndpoints(down, counting(), createLogger('plugin', 'silent'));
    expect([await ask(a, 'plugin-f'), await ask(a, 'plugin-f')]).toEqual(['grpc://f:1', 'grpc://f:1']);
    expect([a.caching, a.size, reads - before]).toEqual([false, 0, 2]);
    a.stop();
    down.disconnect();
    expect(pluginDatabaseUrl({})).toBe('postgresql://postgres@127.0.0.1:5432/platform_plugin');
    expect(pluginDatabaseUrl({ PLUGIN_DATABASE_URL: 'postgresql://reader@db/platform_plugin' })).toBe('postgresql://reader@db/platform_plugin');
    // without PLUGIN_DATABASE_URL: platform_plugin on the module's own server (its DATABASE_URL)
    expect(pluginDatabaseUrl({}, 'postgresql://app:pw@pg.internal:6543/platform_monitoring?sslmode=require')).toBe('postgresql://app:pw@pg.internal:6543/platform_plugin?sslmode=require');
    expect(pluginDatabaseUrl({ PLUGIN_DATABASE_URL: 'postgresql://reader@db/p' }, 'postgresql://app@pg/platform_monitoring')).toBe('postgresql://reader@db/p');
  });

  it('a message it cannot read drops everything; entries are bounded', async () => {
    const a = await resolver(counting(), { maxEntries: 3 });
    await publish('host-5', [['plugin-e', '1.0.0', 'grpc://e:1']]);
    for (const v of ['1.0.0', '1.0.1', '1.0.2', '1.0.3', '1.0.4']) await ask(a, 'plugin-e', v);
    expect(a.size).toBe(3);
    await t.redis.redis.publish(`${t.redis.prefix}plugin:endpoints`, 'not json');
    await waitFor(() => a.size === 0, 1000, 'the cache dropped', 5);
  });
});

/** Cuts one client's connection (found by its CLIENT name) as a network failure would. */
async function killClient(redis: Redis, name: string) {
  const list = (await redis.client('LIST')) as string;
  const line = list.split('\n').find((l) => l.includes(` name=${name} `));
  if (!line) throw new Error(`no client ${name}`);
  await redis.client('KILL', 'ID', /id=(\d+)/.exec(line)![1]);
}
