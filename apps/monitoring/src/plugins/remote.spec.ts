import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@platform/core';
import { fail, serveMonitoringDataSource, serveMonitoringWebhook, type PluginServer } from '@platform/plugin-kit';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { DEFAULT_JOB_OPTIONS } from '@platform/queue';
import { bearer, waitFor } from '@platform/testing';
import { DELIVERY_BATCH_JOB_NAME, type DeliveryJob } from '../ingest/job';
import { createTestMonitoring, type TestMonitoring } from '../test-support';

/** What the test plugins' refusals quote: no answer, log line or stored event may carry it. */
const SECRET = 'sk-live-9f3c2a71b8e04d6d';

/** A hostile plugin: a raw gRPC server answering Event.parse with bytes that are no EventsInfo. */
async function garbageParser() {
  const server = new Server();
  const id = (b: Buffer) => b;
  server.addService(
    { parse: { path: '/spaceone.api.monitoring.plugin.Event/parse', requestStream: false, responseStream: false, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id } },
    { parse: (_call: unknown, cb: (e: null, b: Buffer) => void) => cb(null, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f])) },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { endpoint: `grpc://127.0.0.1:${port}`, kill: () => server.forceShutdown() };
}

/**
 * A webhook plugin written with the kit, as a team publishes its own (or upstream's image under
 * upstream's id): init answers metadata, verify refuses quoting the options (with the secret), parse
 * turns `{alerts: [...]}` into upstream's EventInfo.
 */
function webhookHandlers(calls: { parse: number }) {
  return {
    init: (r: { options: Record<string, unknown> }) => {
      if (r.options.refuse === true) throw fail.invalidParameter('options.refuse', 'this plugin refuses');
      return { metadata: { kind: 'acme', options_seen: Object.keys(r.options).sort() } };
    },
    verify: (r: { options: Record<string, unknown> }) => {
      throw fail.authenticateFailure(`token ${String(r.options.api_key)} was refused by the server`);
    },
    parse: (r: { options: Record<string, unknown>; data: Record<string, unknown> }) => {
      calls.parse++;
      const alerts = r.data.alerts as { id: string; status: string; host: string; at?: string }[] | undefined;
      if (!Array.isArray(alerts)) throw fail.invalidArgument(`no alerts in the payload (api_key ${String(r.options.api_key)})`);
      return {
        results: alerts.map((a) => ({
          event_key: `acme-${a.id}`,
          event_type: a.status === 'ok' ? 'RECOVERY' : 'ALERT',
          title: `Alert ${a.id} on ${a.host}`,
          description: 'from the acme plugin',
          severity: 'WARNING' as const,
          resource: { resource_id: a.host, resource_type: 'host', name: a.host, extra: 'ignored' },
          rule: 'acme-rule',
          occurred_at: a.at ?? '2024-05-01T10:00:00Z',
          additional_info: { id: a.id },
          image_url: 'https://acme.example/i.png',
          provider: 'acme',
          account: 'acct-1',
        })),
      };
    },
  };
}

describe('monitoring with published plugins (kit plugins over gRPC)', () => {
  let t: TestMonitoring;
  let owner: string;
  let admin: string;
  const lines: string[] = [];
  const calls = { parse: 0 };
  let plugin: PluginServer;
  const servers: { kill(): void }[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    t = await createTestMonitoring({
      plugins: { clientConfig: { retryBaseMs: 20, retryMaxMs: 50, reconnectMaxMs: 200, retryAttempts: 2 } },
      logger: createLogger('monitoring', 'debug', sink),
    });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    plugin = await serveMonitoringWebhook(webhookHandlers(calls));
    servers.push(plugin);
  });
  afterAll(async () => {
    for (const s of servers) s.kill();
    await t.close();
  });

  const api = (p: string, body: object, auth = owner) => request(t.app).post(`/monitoring/v1/${p}`).set('Authorization', auth).send(body);
  const createWebhook = async (plugin_id: string, options: object = {}, name = plugin_id) => {
    const res = await api('webhook/create', { name, plugin_info: { plugin_id, options }, project_id: 'project-1' });
    expect(res.status).toBe(200);
    return res.body as { webhook_id: string; webhook_url: string; name: string; plugin_info: Record<string, unknown> };
  };
  const post = (w: { webhook_url: string }, body: unknown) => request(t.app).post(new URL(w.webhook_url).pathname).set('Content-Type', 'application/json').send(JSON.stringify(body));
  const stored = async (webhookId: string) =>
    (await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1 AND outcome <> 'NOT_ACCEPTED'`, [webhookId])).rows[0].n;
  const eventsOf = async (webhookId: string) => {
    const res = await api('event/list', { webhook_id: webhookId, query: { sort: [{ key: 'event_key' }] } });
    expect(res.status).toBe(200);
    return res.body.results as Record<string, any>[];
  };

  it('webhook create with a published plugin: Webhook.init answers the metadata, stored and answered; the version is the one served', async () => {
    await t.pluginTable!.publish('d1', 'plugin-acme-mon-webhook', '2.1.0', plugin.endpoint);
    const w = await createWebhook('plugin-acme-mon-webhook', { region: 'eu' });
    expect(w.plugin_info).toEqual({ plugin_id: 'plugin-acme-mon-webhook', version: '2.1.0', options: { region: 'eu' }, metadata: { kind: 'acme', options_seen: ['region'] }, upgrade_mode: 'AUTO' });
    expect((await api('webhook/get', { webhook_id: w.webhook_id })).body.plugin_info.metadata).toEqual({ kind: 'acme', options_seen: ['region'] });
    // update-plugin calls init again with the new options
    const u = await api('webhook/update-plugin', { webhook_id: w.webhook_id, options: { region: 'us', tier: 1 } });
    expect(u.status).toBe(200);
    expect(u.body.plugin_info.metadata).toEqual({ kind: 'acme', options_seen: ['region', 'tier'] });
    // an id nobody published and no built-in has
    const none = await api('webhook/create', { name: 'x', plugin_info: { plugin_id: 'plugin-nobody' }, project_id: 'project-1' });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('ERROR_NOT_FOUND');
  });

  it('a version published under a built-in id serves it for that domain; withdrawn, the built-in serves again', async () => {
    await t.pluginTable!.publish('d1', 'plugin-prometheus-mon-webhook', '9.0.0', plugin.endpoint);
    const remote = await createWebhook('plugin-prometheus-mon-webhook', {}, 'prom-remote');
    expect(remote.plugin_info).toMatchObject({ version: '9.0.0', metadata: { kind: 'acme' } });
    await t.pluginTable!.withdraw('d1', 'plugin-prometheus-mon-webhook');
    const builtin = await createWebhook('plugin-prometheus-mon-webhook', {}, 'prom-builtin');
    expect(builtin.plugin_info).toMatchObject({ version: '1.1.0', metadata: {} });
  });

  it('upgrade_mode NONE (not set) follows the newest published version, as AUTO; MANUAL keeps its version', async () => {
    await t.pluginTable!.publish('d1', 'plugin-modes-mon-webhook', '1.0.0', plugin.endpoint);
    const none = await createWebhook('plugin-modes-mon-webhook', {}, 'mode-none');
    const manual = await api('webhook/create', { name: 'mode-manual', plugin_info: { plugin_id: 'plugin-modes-mon-webhook', version: '1.0.0', upgrade_mode: 'MANUAL' }, project_id: 'project-1' });
    expect(manual.status).toBe(200);
    await t.db.pool.query(`UPDATE webhook SET plugin_info = plugin_info || '{"upgrade_mode": "NONE"}'::jsonb WHERE webhook_id = $1`, [none.webhook_id]);
    await t.pluginTable!.publish('d1', 'plugin-modes-mon-webhook', '1.1.0', plugin.endpoint);
    const moved = await api('webhook/update-plugin', { webhook_id: none.webhook_id });
    expect([moved.status, moved.body.plugin_info?.version, moved.body.plugin_info?.upgrade_mode]).toEqual([200, '1.1.0', 'NONE']);
    const kept = await api('webhook/update-plugin', { webhook_id: manual.body.webhook_id });
    expect([kept.status, kept.body.plugin_info?.version, kept.body.plugin_info?.upgrade_mode]).toEqual([200, '1.0.0', 'MANUAL']);
    const noVersion = await api('webhook/create', { name: 'mode-manual-2', plugin_info: { plugin_id: 'plugin-modes-mon-webhook', upgrade_mode: 'MANUAL' }, project_id: 'project-1' });
    expect([noVersion.status, noVersion.body.error?.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
  });

  it("the plugin's refusal is our envelope with its code and a 4xx; its text never carries the secret (answer or log)", async () => {
    const refused = await api('webhook/create', { name: 'r', plugin_info: { plugin_id: 'plugin-acme-mon-webhook', options: { refuse: true } }, project_id: 'project-1' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    expect(refused.body.error.message).toContain('this plugin refuses');

    const w = await createWebhook('plugin-acme-mon-webhook', { api_key: SECRET }, 'with-secret');
    const v = await api('webhook/verify-plugin', { webhook_id: w.webhook_id });
    expect(v.status).toBe(400);
    expect(v.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    expect(v.body.error.message).toContain('was refused by the server');
    expect(JSON.stringify(v.body)).not.toContain(SECRET);
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('a plugin that is down: 503 ERROR_PLUGIN_UNAVAILABLE, never a 500', async () => {
    const down = await serveMonitoringWebhook(webhookHandlers(calls));
    down.kill();
    await t.pluginTable!.publish('d1', 'plugin-down-mon-webhook', '1.0.0', down.endpoint);
    const res = await api('webhook/create', { name: 'down', plugin_info: { plugin_id: 'plugin-down-mon-webhook' }, project_id: 'project-1' });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('ERROR_PLUGIN_UNAVAILABLE');
  });

  it('data source register and verify-plugin with a published plugin: metadata, monitoring_type from it; a refusal is a 4xx without the secret', async () => {
    const ds = await serveMonitoringDataSource({
      init: (r) => ({ metadata: { monitoring_type: 'LOG', provider: 'acme-logs', supported_stat: ['AVERAGE'], seen: Object.keys(r.options) } }),
      verify: (r) => {
        throw fail.authenticateFailure(`key ${String(r.options.access_key)} is not valid`);
      },
    });
    servers.push(ds);
    await t.pluginTable!.publish('d1', 'plugin-acme-mon-datasource', '1.4.0', ds.endpoint);
    const reg = await api('data-source/register', { name: 'logs', plugin_info: { plugin_id: 'plugin-acme-mon-datasource', options: { access_key: SECRET }, provider: 'acme' } }, admin);
    expect(reg.status).toBe(200);
    expect(reg.body).toMatchObject({
      monitoring_type: 'LOG',
      provider: 'acme-logs',
      plugin_info: { plugin_id: 'plugin-acme-mon-datasource', version: '1.4.0', metadata: { monitoring_type: 'LOG', provider: 'acme-logs', supported_stat: ['AVERAGE'], seen: ['access_key'] } },
    });
    const v = await api('data-source/verify-plugin', { data_source_id: reg.body.data_source_id }, admin);
    expect(v.status).toBe(400);
    expect(v.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    expect(JSON.stringify(v.body)).not.toContain(SECRET);
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('posts are parsed by Event.parse into events with upstream EventInfo fields; a refused payload is the ERROR event, without the secret', async () => {
    const w = await createWebhook('plugin-acme-mon-webhook', { api_key: SECRET }, 'ingest');
    const res = await post(w, { alerts: [{ id: 'a1', status: 'firing', host: 'web-1', at: '2024-05-01T10:00:00Z' }] });
    expect(res.status).toBe(200);
    await waitFor(async () => (await stored(w.webhook_id)) === 1, 15_000, 'the delivery stored');
    const [e] = await eventsOf(w.webhook_id);
    expect(e).toMatchObject({
      event_key: 'acme-a1',
      event_type: 'ALERT',
      title: 'Alert a1 on web-1',
      description: 'from the acme plugin',
      severity: 'WARNING',
      rule: 'acme-rule',
      resource: { resource_id: 'web-1', resource_type: 'host', name: 'web-1' },
      provider: 'acme',
      account: 'acct-1',
      image_url: 'https://acme.example/i.png',
      occurred_at: '2024-05-01T10:00:00.000Z',
      additional_info: { id: 'a1' },
      webhook_id: w.webhook_id,
      project_id: 'project-1',
    });
    expect(e.resource).not.toHaveProperty('extra');
    // the recovery resolves the same alert (upstream's linking applies to published plugins' events too)
    await post(w, { alerts: [{ id: 'a1', status: 'ok', host: 'web-1' }] }).expect(200);
    await waitFor(async () => (await stored(w.webhook_id)) === 2, 15_000, 'the recovery stored');
    expect((await eventsOf(w.webhook_id)).map((x) => x.event_type).sort()).toEqual(['ALERT', 'RECOVERY']);

    await post(w, { nothing: true }).expect(200);
    await waitFor(async () => (await stored(w.webhook_id)) === 3, 15_000, 'the refused payload stored');
    const error = (await eventsOf(w.webhook_id)).find((x) => x.event_type === 'ERROR')!;
    expect(error).toMatchObject({ severity: 'CRITICAL', title: `Webhook Event Parsing Error - ${w.name}` });
    expect(error.description).toContain('no alerts in the payload');
    expect(error.description).not.toContain(SECRET);
    expect(lines.join('')).toContain('payload not parsed'); // the worker logged it, redacted
    expect(lines.join('')).not.toContain(SECRET);
    const got = await api('webhook/get', { webhook_id: w.webhook_id });
    expect(got.body.requests).toEqual({ total: 3, error: 1 });
  });

  it("a published plugin's events keep the payload as sent in raw_data (no copy of it is made, nothing in it changes)", async () => {
    const w = await createWebhook('plugin-acme-mon-webhook', {}, 'raw-data');
    const payload = { alerts: [{ id: 'r1', status: 'firing', host: 'web-2' }, { id: 'r2', status: 'firing', host: 'web-3' }], extra: { list: [1, 'two', null, true, { deep: [2.5] }], empty: {} } };
    await post(w, payload).expect(200);
    await waitFor(async () => (await stored(w.webhook_id)) === 1, 15_000, 'the delivery stored');
    const events = await eventsOf(w.webhook_id);
    expect(events.map((e) => e.event_key)).toEqual(['acme-r1', 'acme-r2']);
    for (const e of events) expect(e.raw_data).toEqual(payload);
  });

  it('the plugin down during posts: every post accepted, parsed once it is back; exact count, no doubles', async () => {
    const own = await serveMonitoringWebhook(webhookHandlers(calls));
    const port = own.port;
    await t.pluginTable!.publish('d1', 'plugin-flaky-mon-webhook', '1.0.0', own.endpoint);
    const w = await createWebhook('plugin-flaky-mon-webhook', {}, 'flaky');
    await post(w, { alerts: [{ id: 'warm', status: 'firing', host: 'h' }] }).expect(200);
    await waitFor(async () => (await stored(w.webhook_id)) === 1, 15_000, 'the first delivery stored');

    own.kill();
    const N = 40;
    for (let i = 0; i < N; i++) {
      const res = await post(w, { alerts: [{ id: `down-${i}`, status: 'firing', host: `h-${i % 5}` }, { id: `down-${i}-b`, status: 'firing', host: 'h' }] });
      expect(res.status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 1500)); // the worker meets the dead plugin meanwhile
    expect(await stored(w.webhook_id)).toBe(1); // nothing stored as an error while it is down
    const back = await serveMonitoringWebhook(webhookHandlers(calls), { port });
    servers.push(back);
    await waitFor(async () => (await stored(w.webhook_id)) === N + 1, 60_000, 'every delivery stored after the restart', 100);
    const events = await eventsOf(w.webhook_id);
    expect(events).toHaveLength(2 * N + 1);
    expect(new Set(events.map((e) => e.event_key)).size).toBe(2 * N + 1);
    expect(events.filter((e) => e.event_type === 'ERROR')).toEqual([]);
    expect(await t.queue.getFailedCount()).toBe(0);
    expect((await api('webhook/get', { webhook_id: w.webhook_id })).body.requests).toEqual({ total: N + 1, error: 0 });
  });

  it('a plugin answering garbage fails its job after bounded attempts (a dead letter); the worker goes on', async () => {
    const garbage = await garbageParser();
    servers.push(garbage);
    // created with the good plugin (the raw server answers parse only), then the garbage one is published in its place
    await t.pluginTable!.publish('d1', 'plugin-garbage-mon-webhook', '1.0.0', plugin.endpoint);
    const w = await createWebhook('plugin-garbage-mon-webhook', {}, 'garbage');
    await t.pluginTable!.publish('d1', 'plugin-garbage-mon-webhook', '1.0.0', garbage.endpoint);
    const rows = await t.db.pool.query(`SELECT name, domain_id, workspace_id, project_id FROM webhook WHERE webhook_id = $1`, [w.webhook_id]);
    const delivery: DeliveryJob = {
      delivery_id: 'delivery-garbage-1',
      received_at: new Date().toISOString(),
      webhook: { webhook_id: w.webhook_id, ...rows.rows[0], plugin_id: 'plugin-garbage-mon-webhook', version: '1.0.0', upgrade_mode: 'AUTO', options: {} },
      data: { alerts: [] },
    };
    // The job as the app queues it, with two attempts 50 ms apart instead of the default eight from 1 s.
    expect(DEFAULT_JOB_OPTIONS.attempts).toBe(8);
    const job = await t.queue.add(DELIVERY_BATCH_JOB_NAME, { deliveries: [delivery] }, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
    await waitFor(async () => (await job.getState()) === 'failed', 15_000, 'the job failed');
    const failed = await t.queue.getJob(job.id!);
    expect(failed!.attemptsMade).toBe(2);
    expect(failed!.failedReason).toContain('ERROR_PLUGIN_INVALID_RESPONSE');
    expect(await stored(w.webhook_id)).toBe(0);
    // the worker is alive: the next delivery of another webhook is stored
    const ok = await createWebhook('plugin-acme-mon-webhook', {}, 'after-garbage');
    await post(ok, { alerts: [{ id: 'z', status: 'firing', host: 'h' }] }).expect(200);
    await waitFor(async () => (await stored(ok.webhook_id)) === 1, 15_000, 'a later delivery stored');
    await failed!.remove();
  });
});
