import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { bearer, sendPartialRequest } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { webhookPlugins } from '../plugins/webhook';
import { DELIVERY_JOB_NAME, type DeliveryJob } from './job';
import { DeliveryParser, prepareDelivery } from './prepare';
import { storeDeliveries } from './store';
import { NO_PRIVATE_DESTINATIONS } from '@platform/net';

const fixture = (name: string) => JSON.parse(readFileSync(path.join(__dirname, '../plugins/webhook/fixtures', `${name}.json`), 'utf8'));

describe('monitoring webhook ingestion (HTTP app + worker)', () => {
  let t: TestMonitoring;
  let owner: string;
  let sns: http.Server;
  let snsHost: string;
  const confirmations: string[] = [];
  let delivered = 0;

  beforeAll(async () => {
    // A loopback stand-in for AWS SNS's ConfirmSubscription endpoint.
    sns = http.createServer((req, res) => {
      confirmations.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/xml' }).end('<ConfirmSubscriptionResponse/>');
    });
    await new Promise<void>((r) => sns.listen(0, '127.0.0.1', r));
    snsHost = `127.0.0.1:${(sns.address() as AddressInfo).port}`;
    t = await createTestMonitoring({ snsConfirmHosts: [snsHost] });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
  });
  afterAll(async () => {
    await t.close();
    sns.closeAllConnections();
    sns.close();
  });

  const api = (p: string, body: object) => request(t.app).post(`/monitoring/v1/${p}`).set('Authorization', owner).send(body);
  const createWebhook = async (plugin_id: string, options: object = {}, name = plugin_id) => {
    const res = await api('webhook/create', { name, plugin_info: { plugin_id, options }, project_id: 'project-1' });
    expect(res.status).toBe(200);
    return res.body as { webhook_id: string; access_key: string; webhook_url: string; name: string };
  };
  const urlPath = (w: { webhook_url: string }) => new URL(w.webhook_url).pathname;
  /** Posts to the webhook URL and waits until the worker has stored the delivery. */
  const deliver = async (w: { webhook_url: string }, body: unknown, contentType = 'application/json') => {
    const res = await request(t.app).post(urlPath(w)).set('Content-Type', contentType).send(typeof body === 'string' ? body : JSON.stringify(body));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    await t.waitForDeliveries(++delivered);
  };
  const events = async (webhook_id: string) => {
    const res = await api('event/list', { webhook_id, query: { sort: [{ key: 'created_at' }, { key: 'event_key' }] } });
    expect(res.status).toBe(200);
    return res.body.results as Record<string, any>[];
  };
  const requests = async (webhook_id: string) => (await api('webhook/get', { webhook_id })).body.requests;

  it('Prometheus Alertmanager: one event per alert; repeats share the alert; a recovery resolves it', async () => {
    const w = await createWebhook('plugin-prometheus-mon-webhook');
    await deliver(w, fixture('prometheus-firing'));
    const first = await events(w.webhook_id);
    expect(first).toHaveLength(2);
    const rule = first.find((e) => e.event_key === 'e2a3b36a4e1832ef')!;
    expect(rule).toEqual({
      event_id: expect.stringMatching(/^event-[0-9a-f]{12}$/),
      event_key: 'e2a3b36a4e1832ef',
      event_type: 'ALERT',
      title: 'Prometheus is failing rule evaluations.',
      description: 'Prometheus prometheus/prometheus-0 has failed to evaluate 30 rules in the last 5m.',
      severity: 'CRITICAL',
      rule: '/etc/prometheus/rules/prometheus-rulefiles-0/kubelet.rules.yaml;kubelet.rules',
      image_url: '',
      resource: {},
      resources: [],
      provider: '',
      account: '',
      additional_info: {
        runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/prometheus/prometheusrulefailures',
        generator_url: 'http://prometheus:9090/graph?g0.expr=increase%28prometheus_rule_evaluation_failures_total%5B5m%5D%29+%3E+0&g0.tab=1',
        ends_at: '0001-01-01T00:00:00Z',
      },
      raw_data: fixture('prometheus-firing'),
      domain_id: 'd1',
      workspace_id: 'ws-1',
      project_id: 'project-1',
      alert_id: expect.stringMatching(/^alert-[0-9a-f]{12}$/),
      webhook_id: w.webhook_id,
      created_at: expect.any(String),
      occurred_at: '2021-08-23T05:16:56.154Z',
    });
    const disk = first.find((e) => e.event_key === 'b81c57e53f0bff63')!;
    expect(disk).toMatchObject({ severity: 'WARNING', title: 'Disk almost full on node-7', resource: { resource_id: 'node-7', name: 'node-7', resource_type: 'k8s.node' }, resources: ['node-7'] });
    expect(disk.alert_id).not.toBe(rule.alert_id);

    // The same alerts firing again join their alerts.
    await deliver(w, fixture('prometheus-firing'));
    const second = await events(w.webhook_id);
    expect(second).toHaveLength(4);
    expect(second.filter((e) => e.event_key === 'e2a3b36a4e1832ef').map((e) => e.alert_id)).toEqual([rule.alert_id, rule.alert_id]);
    expect(second.filter((e) => e.event_key === 'b81c57e53f0bff63').map((e) => e.alert_id)).toEqual([disk.alert_id, disk.alert_id]);

    // The disk alert resolves; firing again afterwards opens a new alert for it, not for the other.
    await deliver(w, fixture('prometheus-resolved'));
    const recovery = (await events(w.webhook_id)).filter((e) => e.event_type === 'RECOVERY');
    expect(recovery).toHaveLength(1);
    expect(recovery[0]).toMatchObject({ event_key: 'b81c57e53f0bff63', alert_id: disk.alert_id });
    const alert = await t.db.pool.query('SELECT state, resolved_at FROM alert WHERE alert_id = $1', [disk.alert_id]);
    expect(alert.rows[0].state).toBe('RESOLVED');
    await deliver(w, fixture('prometheus-firing'));
    const after = await events(w.webhook_id);
    const lastDisk = after.filter((e) => e.event_key === 'b81c57e53f0bff63').pop()!;
    const lastRule = after.filter((e) => e.event_key === 'e2a3b36a4e1832ef').pop()!;
    expect(lastDisk.alert_id).not.toBe(disk.alert_id);
    expect(lastRule.alert_id).toBe(rule.alert_id);

    // A recovery with no open alert is not stored (upstream), but its delivery is recorded.
    await deliver(w, { ...fixture('prometheus-resolved'), alerts: [{ ...fixture('prometheus-resolved').alerts[0], fingerprint: 'never-fired' }] });
    expect((await events(w.webhook_id)).some((e) => e.event_key === 'never-fired')).toBe(false);
    const skipped = await t.db.pool.query(`SELECT outcome, event_count FROM webhook_delivery WHERE webhook_id = $1 AND outcome = 'RECOVERY_WITHOUT_ALERT'`, [w.webhook_id]);
    expect(skipped.rows).toEqual([{ outcome: 'RECOVERY_WITHOUT_ALERT', event_count: 0 }]);
    expect(await requests(w.webhook_id)).toEqual({ total: 5, error: 0 });
  });

  it('Grafana: unified alerting (one event per group) and legacy dashboard alerts', async () => {
    const w = await createWebhook('plugin-grafana-mon-webhook');
    await deliver(w, fixture('grafana-standard'));
    const [std] = await events(w.webhook_id);
    expect(std).toMatchObject({
      event_type: 'ALERT',
      severity: 'ERROR',
      title: '(blue)',
      rule: '',
      image_url: 'https://play.grafana.org/d/000000012/grafana-play-home?viewPanel=1',
      resource: {},
      additional_info: { team: 'blue' },
      occurred_at: '2021-10-12T07:51:03.157Z',
    });
    expect(std.event_key).toBe(createHash('md5').update('{}:{}').digest('hex'));
    expect(std.description).not.toContain('Annotations:');
    expect(std.description).not.toContain('Silence:');
    expect(std.description).toContain("ValueString: \n- [ var='B' labels={} value=44.23943737541908 ]\n- [ var='C' labels={} value=1 ]\n\n- [ var='B' labels={} value=44.23943737541908 ]\n");

    await deliver(w, fixture('grafana-legacy'));
    const legacy = (await events(w.webhook_id)).find((e) => e.rule === 'Panel Title alert')!;
    expect(legacy).toMatchObject({
      event_key: createHash('md5').update('1:2:1:1').digest('hex'),
      event_type: 'ALERT',
      severity: 'ERROR',
      title: 'Panel Title alert',
      image_url: 'https://grafana.com/assets/img/blog/mixed_styles.png',
      description: 'Notification Message',
      additional_info: { dashboard_id: '1', panel_id: '2', org_id: '1', rule_url: fixture('grafana-legacy').ruleUrl, eval_matches: '[{"value":1,"metric":"Count","tags":{}}]' },
    });
  });

  it('AWS SNS: confirms the subscription against the allowed host, refuses others, parses CloudWatch and Health', async () => {
    const w = await createWebhook('plugin-aws-sns-mon-webhook');
    const confirm = { ...fixture('sns-subscription-confirmation'), SubscribeURL: `http://${snsHost}/?Action=ConfirmSubscription&Token=abc123` };
    await deliver(w, JSON.stringify(confirm), 'text/plain; charset=UTF-8'); // SNS posts JSON as text/plain
    expect(confirmations).toEqual(['/?Action=ConfirmSubscription&Token=abc123']);
    expect(await events(w.webhook_id)).toEqual([]);
    const outcome = await t.db.pool.query(`SELECT outcome FROM webhook_delivery WHERE webhook_id = $1`, [w.webhook_id]);
    expect(outcome.rows).toEqual([{ outcome: 'SUBSCRIPTION_CONFIRMED' }]);

    // Not an AWS SNS endpoint and not allowed: no request leaves, and the refusal is an ERROR event.
    const port = snsHost.split(':')[1];
    await deliver(w, { ...confirm, SubscribeURL: `http://localhost:${port}/?Action=ConfirmSubscription&Token=evil` });
    expect(confirmations).toHaveLength(1);
    const [refused] = await events(w.webhook_id);
    expect(refused).toMatchObject({ event_type: 'ERROR', severity: 'CRITICAL', title: `Webhook Event Parsing Error - ${w.name}` });
    expect(refused.description).toContain('is not an AWS SNS endpoint');

    await deliver(w, JSON.stringify(fixture('sns-cloudwatch-alarm')), 'text/plain; charset=UTF-8');
    const alarm = (await events(w.webhook_id)).find((e) => e.event_type === 'ALERT')!;
    expect(alarm).toMatchObject({
      event_type: 'ALERT',
      severity: 'ERROR',
      title: 'HighCPU-web-1',
      rule: 'HighCPU-web-1',
      description: expect.stringContaining('Threshold Crossed'),
      resource: { resource_id: 'i-0123456789abcdef0', resource_type: 'AWS/EC2', name: '[AWS/EC2] InstanceId=i-0123456789abcdef0 (US East (N. Virginia))' },
      provider: 'aws',
      account: '123456789012',
      occurred_at: '2024-11-13T10:10:31.012Z',
      additional_info: {
        OldStateValue: 'OK',
        AlarmName: 'HighCPU-web-1',
        Region: 'US East (N. Virginia)',
        AWSAccountId: '123456789012',
        AlarmDescription: 'CPU above 80% on the web tier',
        AlarmArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:HighCPU-web-1',
        MetricName: 'CPUUtilization',
        Namespace: 'AWS/EC2',
      },
    });
    await deliver(w, fixture('sns-cloudwatch-ok'));
    const ok = (await events(w.webhook_id)).find((e) => e.event_type === 'RECOVERY')!;
    expect(ok).toMatchObject({ severity: 'INFO', event_key: alarm.event_key, alert_id: alarm.alert_id });

    await deliver(w, fixture('sns-health'));
    const health = (await events(w.webhook_id)).find((e) => e.rule === 'issue')!;
    expect(health).toMatchObject({
      event_key: 'arn:aws:health:us-west-2::event/AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED_90353408594353980',
      title: 'Aws Ec2 Instance Store Drive Performance Degraded',
      severity: 'ERROR',
      description: 'A description of the event will be provided here (Account:123456789012)',
      occurred_at: '2016-06-05T15:10:09.000Z',
      additional_info: { id: '7bf73129-1428-4cd3-a780-95db273d1602', account: '123456789012', region: 'us-west-2', service: 'EC2', affectedEntities: ['i-abcd1111'] },
    });
    expect(await requests(w.webhook_id)).toEqual({ total: 5, error: 1 });
  });

  it('API direct: upstream event format through event/create, and convert_data templates', async () => {
    const w = await createWebhook('plugin-api-direct-mon-webhook');
    const res = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w.webhook_id, access_key: w.access_key, data: fixture('api-direct-event') });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    await t.waitForDeliveries(++delivered);
    const [e] = await events(w.webhook_id);
    expect(e).toMatchObject({
      event_key: 'checkout-latency-p99',
      event_type: 'ALERT',
      title: 'Checkout p99 latency above 2s',
      severity: 'WARNING',
      rule: 'checkout-latency',
      image_url: 'https://grafana.example.com/render/d-solo/checkout?panelId=3',
      resource: { resource_id: 'svc-checkout', resource_type: 'k8s.service', name: 'checkout' },
      provider: 'kubernetes',
      account: 'prod-cluster',
      occurred_at: '2024-11-13T10:00:00.000Z',
      additional_info: { team: 'payments', threshold_ms: '2000' },
    });

    const conv = await createWebhook('plugin-api-direct-mon-webhook', {
      load_json: ['body'],
      convert_data: { event_key: '{{ body.id }}', title: 'Job {{ body.job }} failed', severity: 'ERROR', resource: { resource_id: '{{ body.host }}' } },
    }, 'converted');
    await deliver(conv, { body: JSON.stringify({ id: 'job-42', job: 'nightly-backup', host: 'db-1' }) });
    expect((await events(conv.webhook_id))[0]).toMatchObject({ event_key: 'job-42', title: 'Job nightly-backup failed', severity: 'ERROR', resource: { resource_id: 'db-1' } });
  });

  it('a payload the plugin cannot parse becomes an ERROR event and counts as an error', async () => {
    const w = await createWebhook('plugin-prometheus-mon-webhook', {}, 'broken-source');
    await deliver(w, { hello: 'world' });
    const [e] = await events(w.webhook_id);
    expect(e).toMatchObject({
      event_type: 'ERROR',
      severity: 'CRITICAL',
      title: 'Webhook Event Parsing Error - broken-source',
      description: expect.stringContaining('alerts'),
      raw_data: { hello: 'world' },
      event_key: expect.stringMatching(/^error-/),
    });
    expect(await requests(w.webhook_id)).toEqual({ total: 1, error: 1 });
  });

  it('a delivery stored again (a job re-run after a crash, or two runs at once) adds nothing', async () => {
    const w = await createWebhook('plugin-api-direct-mon-webhook', {}, 'rerun');
    const job: DeliveryJob = {
      delivery_id: 'delivery-rerun-1',
      received_at: new Date().toISOString(),
      webhook: { webhook_id: w.webhook_id, name: w.name, domain_id: 'd1', workspace_id: 'ws-1', project_id: 'project-1', plugin_id: 'plugin-api-direct-mon-webhook', version: '1.2.0', upgrade_mode: 'AUTO', options: {} },
      data: { event_key: 'once', title: 'stored once' },
    };
    const ctx = { outbound: NO_PRIVATE_DESTINATIONS, snsConfirmHosts: [] };
    const prepared = await prepareDelivery(new DeliveryParser(webhookPlugins(), ctx), job);
    const runs = await Promise.allSettled([storeDeliveries(t.db.pool, [prepared], 600), storeDeliveries(t.db.pool, [await prepareDelivery(new DeliveryParser(webhookPlugins(), ctx), job)], 600)]);
    expect(runs.map((r) => (r.status === 'fulfilled' ? r.value : 'failed')).sort()).toEqual([0, 1]);
    expect(await storeDeliveries(t.db.pool, [prepared], 600)).toBe(0);
    delivered++;
    expect((await events(w.webhook_id)).map((e) => e.event_key)).toEqual(['once']);
    expect(await requests(w.webhook_id)).toEqual({ total: 1, error: 0 });
  });

  it('store transactions running at once (a worker runs two; replicas run more) share each key\'s alert and never deadlock', async () => {
    const w = await createWebhook('plugin-api-direct-mon-webhook', {}, 'at-once');
    const ctx = { outbound: NO_PRIVATE_DESTINATIONS, snsConfirmHosts: [] };
    const keys = Array.from({ length: 30 }, (_, i) => `key-${i}`);
    // Four batches over the same 30 keys, each in another order: without one lock order they would wait on each other in a cycle.
    const orders = [keys, [...keys].reverse(), [...keys.slice(15), ...keys.slice(0, 15)], [...keys.slice(0, 15).reverse(), ...keys.slice(15).reverse()]];
    const batches = await Promise.all(
      orders.map((order, b) =>
        Promise.all(
          order.map((event_key, i) =>
            prepareDelivery(
              new DeliveryParser(webhookPlugins(), ctx),
              {
                delivery_id: `delivery-at-once-${b}-${i}`,
                received_at: new Date().toISOString(),
                webhook: { webhook_id: w.webhook_id, name: w.name, domain_id: 'd1', workspace_id: 'ws-1', project_id: 'project-1', plugin_id: 'plugin-api-direct-mon-webhook', version: '1.2.0', upgrade_mode: 'AUTO', options: {} },
                data: { event_key, title: `at once ${b}` },
              },
            ),
          ),
        ),
      ),
    );
    expect(await Promise.all(batches.map((batch) => storeDeliveries(t.db.pool, batch, 600)))).toEqual([30, 30, 30, 30]);
    delivered += 120;
    const stored = await t.db.pool.query<{ event_key: string; alerts: number; events: number }>(
      `SELECT event_key, count(DISTINCT alert_id)::int AS alerts, count(*)::int AS events FROM event WHERE webhook_id = $1 GROUP BY 1 ORDER BY 1`,
      [w.webhook_id],
    );
    expect(stored.rows).toHaveLength(30);
    expect(stored.rows.every((r) => r.alerts === 1 && r.events === 4)).toBe(true);
    const alerts = await t.db.pool.query(`SELECT count(*)::int AS n FROM alert WHERE webhook_id = $1`, [w.webhook_id]);
    expect(alerts.rows[0].n).toBe(30);
    expect(await requests(w.webhook_id)).toEqual({ total: 120, error: 0 });
  });

  it('a job queued by an older replica (one delivery per job) is still processed', async () => {
    const w = await createWebhook('plugin-api-direct-mon-webhook', {}, 'legacy-job');
    const job: DeliveryJob = {
      delivery_id: 'delivery-legacy-1',
      received_at: new Date().toISOString(),
      webhook: { webhook_id: w.webhook_id, name: w.name, domain_id: 'd1', workspace_id: 'ws-1', project_id: 'project-1', plugin_id: 'plugin-api-direct-mon-webhook', version: '1.2.0', upgrade_mode: 'AUTO', options: {} },
      data: { event_key: 'legacy', title: 'one delivery per job' },
    };
    await t.queue.add(DELIVERY_JOB_NAME, job, { jobId: job.delivery_id });
    await t.waitForDeliveries(++delivered);
    expect((await events(w.webhook_id)).map((e) => e.event_key)).toEqual(['legacy']);
    expect(await requests(w.webhook_id)).toEqual({ total: 1, error: 0 });
  });

  it('refuses a wrong key, a disabled or deleted webhook, bad bodies and other methods — and counts none of them', async () => {
    const w = await createWebhook('plugin-prometheus-mon-webhook', {}, 'guarded');
    const wrongKey = urlPath(w).replace(w.access_key, `${w.access_key.slice(0, -1)}x`);
    const denied = await request(t.app).post(wrongKey).send(fixture('prometheus-firing'));
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    const deniedOp = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w.webhook_id, access_key: 'nope', data: {} });
    expect(deniedOp.status).toBe(403);

    expect((await request(t.app).post(urlPath(w)).set('Content-Type', 'application/json').send('{not json')).body.error.code).toBe('ERROR_INVALID_JSON');
    expect((await request(t.app).post(urlPath(w)).set('Content-Type', 'application/json').send('[1,2]')).status).toBe(400);
    const get = await request(t.app).get(urlPath(w));
    expect(get.status).toBe(405);

    await api('webhook/disable', { webhook_id: w.webhook_id });
    const disabled = await request(t.app).post(urlPath(w)).send(fixture('prometheus-firing'));
    expect(disabled.status).toBe(400);
    expect(disabled.body.error).toMatchObject({ code: 'ERROR_WEBHOOK_STATE_DISABLED', message: expect.stringContaining(w.webhook_id) });
    const disabledOp = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w.webhook_id, access_key: w.access_key, data: {} });
    expect(disabledOp.body.error.code).toBe('ERROR_WEBHOOK_STATE_DISABLED');
    expect(await requests(w.webhook_id)).toEqual({ total: 0, error: 0 });

    await api('webhook/enable', { webhook_id: w.webhook_id });
    await api('webhook/delete', { webhook_id: w.webhook_id });
    const deleted = await request(t.app).post(urlPath(w)).send(fixture('prometheus-firing'));
    // A deleted webhook, an unknown id and a wrong key answer alike: ids cannot be probed.
    const unknown = await request(t.app).post(urlPath(w).replace(w.webhook_id, 'webhook-000000000000')).send(fixture('prometheus-firing'));
    const nul = await request(t.app).post(urlPath(w).replace(w.webhook_id, '%00')).send(fixture('prometheus-firing'));
    for (const r of [deleted, unknown, nul]) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual(denied.body);
    }
    const { rows } = await t.db.pool.query('SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1', [w.webhook_id]);
    expect(rows[0].n).toBe(0);
  });

  it('checks the webhook and its key before reading the payload', async () => {
    const w = await createWebhook('plugin-prometheus-mon-webhook', {}, 'key-first');
    // 900 KB announced, a few bytes sent: the 403 must not wait for the rest.
    const res = await sendPartialRequest(t.app, { path: urlPath(w).replace(w.access_key, 'not-the-key') });
    expect(res.statusLine).toBe('HTTP/1.1 403 Forbidden');
    expect(res.raw).toMatch(/connection: close/i);
  });
});

describe('monitoring webhook ingestion when Redis is down', () => {
  let t: TestMonitoring;
  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false, queueRedisUrl: 'redis://127.0.0.1:1', ingest: { enqueueTimeoutMs: 1000 } });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
  });
  afterAll(() => t.close());

  it('answers 503 (so the sender retries), never 2xx for a payload it could not queue', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (await request(t.app).post('/monitoring/v1/webhook/create').set('Authorization', owner).send({ name: 'w', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-1' })).body;
    const res = await request(t.app).post(new URL(w.webhook_url).pathname).send(fixture('prometheus-firing'));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
    const op = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w.webhook_id, access_key: w.access_key, data: fixture('prometheus-firing') });
    expect(op.status).toBe(503);
    // The queue's connection is down: the answer comes at once, without waiting for the timeout.
    const started = Date.now();
    expect((await request(t.app).post(new URL(w.webhook_url).pathname).send(fixture('prometheus-firing'))).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(900);
    const ready = await request(t.app).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toMatchObject({ queue: 'unavailable', postgres: 'ok' });
  });
});
