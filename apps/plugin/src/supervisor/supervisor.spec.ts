import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@platform/core';
import { bearer } from '@platform/testing';
import { createTestPlugin } from '../test-support';

const SECRET = 'supervisor-secret-5f1c0e9a7b';
const plugin = (plugin_id: string, version: string, endpoint = `grpc://10.0.0.7:50051`, extra: object = {}) => ({ plugin_id, version, state: 'ACTIVE', endpoint, ...extra });

describe('plugin module: supervisors and endpoints', () => {
  let t: Awaited<ReturnType<typeof createTestPlugin>>;
  const log: string[] = [];
  let admin1: string;
  let admin2: string;
  let operator: string;
  beforeAll(async () => {
    const sink = new Writable({ write: (c, _e, cb) => (log.push(String(c)), cb()) });
    t = await createTestPlugin({}, createLogger('plugin', 'info', sink));
    [admin1, admin2, operator] = await Promise.all(['d1', 'd2', 'operator'].map((domainId) => bearer({ domainId, roleType: 'DOMAIN_ADMIN', userId: 'admin' })));
  });
  afterAll(() => t.close());

  const call = (path: string, body: object, token = admin1) => request(t.app).post(`/plugin/v1/${path}`).set('Authorization', token).send(body);
  const publish = (body: object, token = admin1) => call('supervisor/publish', { name: 'sup', hostname: 'host-a', secret_key: SECRET, ...body }, token);
  const endpointOf = (body: object, token = admin1) => call('plugin/get-plugin-endpoint', body, token);

  it('publishes, and get, list and list-plugins answer it without the secret', async () => {
    const res = await publish({ plugin_info: [plugin('plugin-cost', '1.2.0', 'GRPC://Cost.Plugins:50051'), plugin('plugin-hook', '0.1.0', 'grpcs://hook:443', { endpoints: ['grpcs://hook-0:443'] })], labels: ['a'], tags: { team: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'sup', hostname: 'host-a', state: 'ENABLED', is_public: false, labels: ['a'], tags: { team: 'x' }, domain_id: 'd1' });
    const id = res.body.supervisor_id;
    expect((await call('supervisor/get', { supervisor_id: id })).body).toEqual(res.body);
    const list = await call('supervisor/list', {});
    expect(list.body.total_count).toBe(1);
    const plugins = await call('supervisor/list-plugins', { supervisor_id: id });
    expect(plugins.body.results).toEqual([
      { plugin_id: 'plugin-cost', version: '1.2.0', state: 'ACTIVE', endpoint: 'grpc://cost.plugins:50051', endpoints: [], managed: false, domain_id: 'd1', supervisor_id: id, supervisor_name: 'sup' },
      { plugin_id: 'plugin-hook', version: '0.1.0', state: 'ACTIVE', endpoint: 'grpcs://hook:443', endpoints: ['grpcs://hook-0:443'], managed: false, domain_id: 'd1', supervisor_id: id, supervisor_name: 'sup' },
    ]);
    const everything = JSON.stringify([res.body, list.body, plugins.body]) + log.join('');
    expect(everything).not.toContain(SECRET);
    expect(log.join('')).toContain('supervisor published');
    const { rows } = await t.db.pool.query('SELECT secret_digest FROM supervisor');
    expect(rows[0].secret_digest).toMatch(/^scrypt\$[0-9a-f]{32}\$[0-9a-f]{64}$/);
    expect(rows[0].secret_digest).not.toContain(SECRET);
  });

  it('a later publish from the same hostname needs the same secret_key, and replaces the plugin list', async () => {
    const wrong = await publish({ secret_key: 'another-secret', plugin_info: [plugin('plugin-cost', '9.9.9', 'grpc://evil:1')] });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect((await endpointOf({ plugin_id: 'plugin-cost' })).body.endpoint).toBe('grpc://cost.plugins:50051');
    const again = await publish({ name: 'sup-2', plugin_info: [plugin('plugin-cost', '1.3.0', 'grpc://cost-13:50051')] });
    expect(again.status).toBe(200);
    expect(again.body.name).toBe('sup-2');
    const plugins = await call('supervisor/list-plugins', {});
    expect(plugins.body.results.map((p: { plugin_id: string; version: string }) => `${p.plugin_id}@${p.version}`)).toEqual(['plugin-cost@1.3.0']);
  });

  it('get-plugin-endpoint: AUTO the newest in semantic-version order, MANUAL the one asked, unknown a 404', async () => {
    const versions = ['1.9.0', '1.10.0', '1.10.0-rc.1', '1.2.0', 'v1.10.0-rc.2'];
    const res = await publish({ hostname: 'host-v', plugin_info: versions.map((v) => plugin('plugin-sem', v, `grpc://sem-${v.replace(/[^0-9a-z]/g, '')}:1`)) });
    expect(res.status).toBe(200);
    expect((await endpointOf({ plugin_id: 'plugin-sem', upgrade_mode: 'AUTO' })).body).toEqual({ endpoint: 'grpc://sem-1100:1', updated_version: '1.10.0' });
    expect((await endpointOf({ plugin_id: 'plugin-sem', version: '1.2.0', upgrade_mode: 'AUTO' })).body.updated_version).toBe('1.10.0');
    expect((await endpointOf({ plugin_id: 'plugin-sem', version: '1.9.0', upgrade_mode: 'MANUAL' })).body).toEqual({ endpoint: 'grpc://sem-190:1', updated_version: '1.9.0' });
    expect((await endpointOf({ plugin_id: 'plugin-sem', version: '1.9.0' })).body.updated_version).toBe('1.9.0'); // MANUAL by default with a version
    const missing = await endpointOf({ plugin_id: 'plugin-sem', version: '3.0.0', upgrade_mode: 'MANUAL' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('ERROR_NOT_FOUND');
    expect((await endpointOf({ plugin_id: 'no-such-plugin' })).status).toBe(404);
    expect((await endpointOf({ plugin_id: 'plugin-sem', upgrade_mode: 'MANUAL' })).status).toBe(400);
  });

  it('only ACTIVE versions with an endpoint resolve; an ACTIVE one without an endpoint is refused', async () => {
    expect((await publish({ hostname: 'host-p', plugin_info: [{ plugin_id: 'plugin-prov', version: '2.0.0', state: 'PROVISIONING' }, plugin('plugin-prov', '1.0.0', 'grpc://prov:1')] })).status).toBe(200);
    expect((await endpointOf({ plugin_id: 'plugin-prov', upgrade_mode: 'AUTO' })).body.updated_version).toBe('1.0.0');
    const bad = await publish({ hostname: 'host-q', plugin_info: [{ plugin_id: 'plugin-x', version: '1.0.0', state: 'ACTIVE' }] });
    expect(bad.status).toBe(400);
  });

  it("a version's endpoints[] are answered in turn, as upstream's round robin; a single endpoint always", async () => {
    const endpoints = ['grpc://rr-1:50051', 'grpc://rr-2:50051', 'grpc://rr-3:50051'];
    expect((await publish({ hostname: 'host-rr', plugin_info: [plugin('plugin-rr', '1.0.0', 'grpc://rr-0:50051', { endpoints })] })).status).toBe(200);
    const turns = [];
    for (let i = 0; i < 4; i++) turns.push((await endpointOf({ plugin_id: 'plugin-rr', upgrade_mode: 'AUTO' })).body.endpoint);
    expect(turns).toEqual([...endpoints, endpoints[0]]);
    expect((await publish({ hostname: 'host-single', plugin_info: [plugin('plugin-one', '1.0.0', 'grpc://one:50051')] })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await endpointOf({ plugin_id: 'plugin-one' })).body.endpoint).toBe('grpc://one:50051');
  });

  it('refuses endpoints that are not grpc:// or grpcs:// host:port, and no option of a caller changes one', async () => {
    for (const endpoint of ['http://x:80', 'grpc://x', 'grpc://u:p@x:1', 'grpc://x:1/path', 'grpc://x:1?q=1', 'grpc://x:70000', 'file:///etc/passwd', 'x'.repeat(600)]) {
      const res = await publish({ hostname: 'host-bad', plugin_info: [plugin('plugin-bad', '1.0.0', endpoint)] });
      expect([endpoint, res.status]).toEqual([endpoint, 400]);
    }
    const inList = await publish({ hostname: 'host-bad', plugin_info: [plugin('plugin-bad', '1.0.0', 'grpc://ok:1', { endpoints: ['https://x:1'] })] });
    expect(inList.status).toBe(400);
    for (const extra of [{ endpoint: 'grpc://mine:1' }, { labels: { host: 'x' } }, { supervisor_id: 'x' }]) {
      expect((await endpointOf({ plugin_id: 'plugin-cost', ...extra })).status).toBe(400);
    }
  });

  it('bounds: plugin_info, strings, labels, tags, duplicates', async () => {
    const many = Array.from({ length: 201 }, (_, i) => plugin(`p-${i}`, '1.0.0'));
    expect((await publish({ hostname: 'host-b', plugin_info: many })).status).toBe(400);
    expect((await publish({ hostname: 'host-b', plugin_info: many.slice(0, 200) })).status).toBe(200);
    expect((await publish({ hostname: 'h'.repeat(254) })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', secret_key: 's'.repeat(1025) })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', labels: Array.from({ length: 51 }, () => 'l') })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', tags: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 1])) })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', tags: { big: 'x'.repeat(17_000) } })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', plugin_info: [plugin('p', '1.0.0'), plugin('p', '1.0.0')] })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', plugin_info: [plugin('bad id!', '1.0.0')] })).status).toBe(400);
    expect((await publish({ hostname: 'host-c', plugin_info: [plugin('p', '1.0.0; drop')] })).status).toBe(400);
    // the platform's body reader refuses __proto__ / constructor keys anywhere (400 naming the key)
    for (const key of ['__proto__', 'constructor']) {
      const res = await publish({ hostname: 'host-c', tags: JSON.parse(`{"${key}": {"polluted": 1}}`) });
      expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('access: workspace and user tokens cannot publish or read; a public supervisor only from the operator domain', async () => {
    const ws = await bearer({ domainId: 'd1', roleType: 'WORKSPACE_OWNER' });
    const user = await bearer({ domainId: 'd1', roleType: 'USER' });
    const adminInWorkspace = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', scope: 'WORKSPACE', workspaceId: 'ws-1' });
    for (const token of [ws, user, adminInWorkspace]) {
      expect((await publish({ hostname: 'host-w' }, token)).status).toBe(403);
      expect((await call('supervisor/list', {}, token)).status).toBe(403);
      expect((await endpointOf({ plugin_id: 'plugin-cost' }, token)).status).toBe(403);
    }
    expect((await request(t.app).post('/plugin/v1/supervisor/publish').send({ name: 'x', hostname: 'x', secret_key: 'x' })).status).toBe(401);
    expect((await publish({ hostname: 'host-pub', is_public: true }, admin2)).status).toBe(403);
    const pub = await publish({ hostname: 'host-pub', is_public: true, plugin_info: [plugin('plugin-public', '1.0.0', 'grpc://public:1'), plugin('plugin-cost', '1.3.0', 'grpc://public-cost:1')] }, operator);
    expect(pub.status).toBe(200);
    // every domain resolves a public plugin; the domain's own supervisor wins on the same version
    expect((await endpointOf({ plugin_id: 'plugin-public' }, admin2)).body.endpoint).toBe('grpc://public:1');
    expect((await endpointOf({ plugin_id: 'plugin-cost', version: '1.3.0' }, admin1)).body.endpoint).toBe('grpc://cost-13:50051');
    expect((await endpointOf({ plugin_id: 'plugin-cost', version: '1.3.0' }, admin2)).body.endpoint).toBe('grpc://public-cost:1');
    // but a public supervisor is listed and managed only in the operator's domain
    expect((await call('supervisor/list', {}, admin2)).body.total_count).toBe(0);
  });

  it('domains are isolated: another domain neither sees, resolves nor deregisters', async () => {
    const mine = (await call('supervisor/list', { name: 'sup-2' })).body.results[0];
    expect((await call('supervisor/get', { supervisor_id: mine.supervisor_id }, admin2)).status).toBe(404);
    expect((await call('supervisor/deregister', { supervisor_id: mine.supervisor_id }, admin2)).status).toBe(404);
    expect((await call('supervisor/list-plugins', {}, admin2)).body.total_count).toBe(0);
    expect((await endpointOf({ plugin_id: 'plugin-sem' }, admin2)).status).toBe(404);
    expect((await call('supervisor/get', { supervisor_id: mine.supervisor_id, domain_id: 'd2' })).status).toBe(403);
    // the same hostname in another domain is another supervisor, with its own secret
    expect((await publish({ secret_key: 'd2-secret', plugin_info: [plugin('plugin-sem', '5.0.0', 'grpc://d2:1')] }, admin2)).status).toBe(200);
    expect((await endpointOf({ plugin_id: 'plugin-sem' })).body.updated_version).toBe('1.10.0');
  });

  it('deregister removes the endpoints and announces the change', async () => {
    const sub = t.redis.redis.duplicate();
    const messages: string[] = [];
    sub.on('message', (_c, m) => messages.push(m));
    await sub.subscribe(`${t.redis.prefix}plugin:endpoints`);
    const id = (await call('supervisor/list', { name: 'sup-2' })).body.results[0].supervisor_id;
    expect((await call('supervisor/deregister', { supervisor_id: id })).body).toEqual({});
    expect((await endpointOf({ plugin_id: 'plugin-cost', version: '1.3.0' })).body.endpoint).toBe('grpc://public-cost:1');
    expect((await call('supervisor/get', { supervisor_id: id })).status).toBe(404);
    expect((await call('supervisor/deregister', { supervisor_id: id })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 50));
    expect(messages.map((m) => JSON.parse(m))).toEqual([{ d: 'd1', p: ['plugin-cost'] }]);
    sub.disconnect();
  });

  it('list-plugins pages of any sort neither repeat nor skip a row', async () => {
    const versions = Array.from({ length: 40 }, (_, i) => `1.${i}.0`);
    const res = await publish({ hostname: 'host-pages', plugin_info: versions.map((v, i) => plugin(`plugin-page-${i % 3}`, v)) });
    const seen: string[] = [];
    for (let start = 1; start <= 40; start += 3) {
      const page = await call('supervisor/list-plugins', { supervisor_id: res.body.supervisor_id, query: { sort: [{ key: 'state' }], page: { start, limit: 3 } } });
      seen.push(...page.body.results.map((p: { plugin_id: string; version: string }) => `${p.plugin_id}@${p.version}`));
    }
    expect(seen.length).toBe(40);
    expect(new Set(seen).size).toBe(40);
  });

  it('concurrent first publishes of one hostname: one supervisor, and only its secret publishes', async () => {
    const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => publish({ hostname: 'host-race', secret_key: `racer-${i}`, plugin_info: [plugin('plugin-race', `1.0.${i}`)] })));
    const statuses = racers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 403, 403, 403, 403, 403, 403, 403]);
    const { rows } = await t.db.pool.query("SELECT count(*)::int AS n FROM supervisor WHERE hostname = 'host-race'");
    expect(rows[0].n).toBe(1);
    const same = await Promise.all(Array.from({ length: 6 }, () => publish({ hostname: 'host-race-2', plugin_info: [plugin('plugin-race', '2.0.0')] })));
    expect(same.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(same.map((r) => r.body.supervisor_id)).size).toBe(1);
  });

  it('publishes and deregisters racing on one hostname: no 5xx, and what is left is one whole publish or nothing', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await publish({ hostname: 'host-churn', plugin_info: [plugin('plugin-churn', '1.0.0')] });
      const id = first.body.supervisor_id;
      const racers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          i % 3 === 0
            ? call('supervisor/deregister', { supervisor_id: id })
            : publish({ hostname: 'host-churn', plugin_info: [plugin('plugin-churn', `1.0.${i}`), plugin('plugin-churn-b', `2.0.${i}`)] }),
        ),
      );
      for (const r of racers) expect([200, 404, 409]).toContain(r.status);
      const { rows } = await t.db.pool.query(
        `SELECT s.supervisor_id, array_agg(p.version ORDER BY p.plugin_id) AS versions FROM supervisor s LEFT JOIN installed_plugin p USING (supervisor_id)
          WHERE s.hostname = 'host-churn' GROUP BY s.supervisor_id`,
      );
      expect(rows.length).toBeLessThanOrEqual(1);
      // one publish's whole list: both plugins of the same racer (or the first publish's one, untouched)
      const left: string[] = rows[0]?.versions ?? [];
      if (left.length === 2) expect(left[0].split('.')[2]).toBe(left[1].split('.')[2]);
      else if (left.length) expect(left).toEqual(['1.0.0']);
      await Promise.all(rows.map((r: { supervisor_id: string }) => call('supervisor/deregister', { supervisor_id: r.supervisor_id })));
    }
  });
});
