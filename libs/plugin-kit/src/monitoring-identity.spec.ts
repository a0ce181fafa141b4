import { PluginClients } from '@platform/plugin';
import { fail, serveAuth, serveMonitoringDataSource, serveMonitoringWebhook, servePlugin, type PluginServer } from './index';
import { clientConfig, sleep } from './test-support';

/** Every monitoring and identity call through the client against plugins written with the kit, and health / ServerInfo. */
describe('monitoring and identity plugins: client ↔ kit', () => {
  const clients = new PluginClients(clientConfig());
  const servers: PluginServer[] = [];
  afterAll(async () => {
    clients.close();
    for (const s of servers) s.kill();
  });
  const keep = (s: PluginServer) => (servers.push(s), s);

  it('Webhook.init / verify and Event.parse: events with their severity by name and their Structs as JSON', async () => {
    const s = keep(
      await serveMonitoringWebhook({
        init: (r) => ({ metadata: { options_seen: r.options } }),
        verify: (r) => {
          if (r.options.strict === true) throw fail.invalidParameter('options.strict', 'not supported');
        },
        parse: (r) => ({
          results: (r.data.alerts as { fingerprint: string; status: string; labels: Record<string, string> }[]).map((a) => ({
            event_key: a.fingerprint,
            event_type: a.status === 'resolved' ? 'RECOVERY' : 'ALERT',
            title: a.labels.alertname,
            severity: 'CRITICAL',
            resource: { resource_type: 'pod', name: a.labels.pod },
            occurred_at: '2024-01-01T00:00:00Z',
            additional_info: { labels: a.labels },
            resources: ['x'],
          })),
        }),
      }),
    );
    const m = clients.monitoring(s.endpoint);
    await expect(m.webhook.init({ options: { a: [1, { b: null }] } })).resolves.toEqual({ metadata: { options_seen: { a: [1, { b: null }] } } });
    await expect(m.webhook.verify({ options: {} })).resolves.toBeUndefined();
    await expect(m.webhook.verify({ options: { strict: true } })).rejects.toMatchObject({ status: 400, code: 'ERROR_INVALID_PARAMETER' });
    const events = await m.event.parse({
      options: {},
      data: { alerts: [{ fingerprint: 'f1', status: 'firing', labels: { alertname: 'HighCPU', pod: 'api-1' } }, { fingerprint: 'f2', status: 'resolved', labels: { alertname: 'Disk', pod: 'db-0' } }] },
    });
    expect(events.results).toHaveLength(2);
    expect(events.results[0]).toEqual({
      event_key: 'f1',
      event_type: 'ALERT',
      title: 'HighCPU',
      description: '',
      severity: 'CRITICAL',
      resource: { resource_type: 'pod', name: 'api-1' },
      rule: '',
      occurred_at: '2024-01-01T00:00:00Z',
      additional_info: { labels: { alertname: 'HighCPU', pod: 'api-1' } },
      image_url: '',
      provider: '',
      account: '',
      resources: ['x'],
    });
    expect(events.results[1]).toMatchObject({ event_key: 'f2', event_type: 'RECOVERY' });
  });

  it('a monitoring data source: DataSource.init / verify, Metric.list / get_data and the Log.list stream', async () => {
    const s = keep(
      await serveMonitoringDataSource({
        init: () => ({ metadata: { supported_resource_type: ['inventory.CloudService'], supported_stat: ['AVERAGE'], required_keys: ['data.id'] } }),
        verify: (r) => {
          if (!r.secret_data.key) throw fail.requiredParameter('secret_data.key');
        },
        listMetrics: () => ({ metrics: [{ key: 'cpu', name: 'CPU', unit: { x: 'Timestamp', y: 'Percent' }, metric_query: { id: 'i-1' } }] }),
        getMetricData: (r) => ({ labels: ['2024-01-01T00:00:00Z', '2024-01-01T00:05:00Z'], values: { [r.metric]: [1.5, 2.5] } }),
        listLogs: function* (r) {
          for (let i = 0; i < r.limit; i++) yield { results: [{ line: i, message: `log ${i}` }] };
        },
      }),
    );
    const m = clients.monitoring(s.endpoint);
    await expect(m.dataSource.init({ options: {} })).resolves.toEqual({ metadata: { supported_resource_type: ['inventory.CloudService'], supported_stat: ['AVERAGE'], required_keys: ['data.id'] } });
    await expect(m.dataSource.verify({ options: {}, secret_data: {} })).rejects.toMatchObject({ status: 400, code: 'ERROR_REQUIRED_PARAMETER' });
    await expect(m.dataSource.verify({ options: {}, secret_data: { key: 'k' } })).resolves.toBeUndefined();
    await expect(m.metric.list({ query: {} })).resolves.toEqual({ metrics: [{ key: 'cpu', name: 'CPU', group: '', unit: { x: 'Timestamp', y: 'Percent' }, metric_query: { id: 'i-1' } }] });
    await expect(m.metric.getData({ metric: 'cpu', start: 'a', end: 'b', period: 300 })).resolves.toEqual({ labels: ['2024-01-01T00:00:00Z', '2024-01-01T00:05:00Z'], values: { cpu: [1.5, 2.5] } });
    const lines: unknown[] = [];
    for await (const p of m.log.list({ limit: 3, sort: { key: 'line', desc: true } })) lines.push(...p.results);
    expect(lines).toEqual([{ line: 0, message: 'log 0' }, { line: 1, message: 'log 1' }, { line: 2, message: 'log 2' }]);
  });

  it('ExternalAuth.init / authorize: the user as the plugin answers it, state by name', async () => {
    const s = keep(
      await serveAuth({
        init: (r) => ({ metadata: { auth_type: 'OIDC', issuer: r.options.issuer, domain: r.domain_id } }),
        authorize: (r) => {
          if (r.credentials.password !== 'right') throw fail.authenticateFailure('wrong password');
          return { user_id: String(r.credentials.user_id), name: 'Alice', email: 'alice@example.com', state: 'ENABLED' };
        },
      }),
    );
    const id = clients.identity(s.endpoint);
    await expect(id.externalAuth.init({ options: { issuer: 'https://sso' }, domain_id: 'domain-1' })).resolves.toEqual({ metadata: { auth_type: 'OIDC', issuer: 'https://sso', domain: 'domain-1' } });
    await expect(id.externalAuth.authorize({ credentials: { user_id: 'alice', password: 'right' }, options: {}, secret_data: {}, domain_id: 'd' })).resolves.toEqual({
      user_id: 'alice',
      name: 'Alice',
      email: 'alice@example.com',
      mobile: '',
      group: '',
      state: 'ENABLED',
    });
    await expect(id.externalAuth.authorize({ credentials: { user_id: 'alice', password: 'wrong' } })).rejects.toMatchObject({ status: 400, code: 'ERROR_AUTHENTICATE_FAILURE' });
  });

  it('health is SERVING, NOT_FOUND for a service the plugin does not serve, NOT_SERVING while stopping; ServerInfo answers the version', async () => {
    let release: () => void = () => {};
    const s = await serveMonitoringWebhook(
      { init: () => new Promise((r) => (release = () => r({})) ), parse: () => ({}) },
      { version: '2.3.4' },
    );
    await expect(clients.health(s.endpoint)).resolves.toBe('SERVING');
    await expect(clients.health(s.endpoint, 'spaceone.api.monitoring.plugin.Event')).resolves.toBe('SERVING');
    await expect(clients.health(s.endpoint, 'spaceone.api.cost_analysis.plugin.Cost')).rejects.toMatchObject({ status: 404 });
    await expect(clients.version(s.endpoint)).resolves.toBe('2.3.4');
    // a call in flight gets its grace: stop waits for it
    const inFlight = clients.monitoring(s.endpoint).webhook.init({});
    await sleep(50);
    const stopped = s.stop(5000);
    await sleep(50);
    release();
    await expect(inFlight).resolves.toEqual({ metadata: {} });
    await stopped;
    await expect(clients.health(s.endpoint, '', { timeoutMs: 500 })).rejects.toMatchObject({ status: 503 });
  });

  it('the channel pool is bounded: past maxChannels the least recently used is closed; idle channels close', async () => {
    const small = new PluginClients(clientConfig({ maxChannels: 2, channelIdleMs: 1000 }));
    try {
      const plugins = await Promise.all([0, 1, 2].map(() => servePlugin([], {}).then(keep)));
      for (const p of plugins) await expect(small.version(p.endpoint)).resolves.toBe('1.0.0');
      expect(small.openChannels).toBe(2);
      await expect(Promise.all(plugins.map((p) => small.version(p.endpoint)))).resolves.toEqual(['1.0.0', '1.0.0', '1.0.0']);
      expect(small.openChannels).toBeLessThanOrEqual(2);
      await sleep(2200);
      expect(small.openChannels).toBe(0);
      await expect(small.version(plugins[0].endpoint)).resolves.toBe('1.0.0');
    } finally {
      small.close();
    }
    // a call after close (a request during shutdown) is a 503, never a 500
    await expect(small.version(servers[0].endpoint)).rejects.toMatchObject({ status: 503, code: 'ERROR_PLUGIN_UNAVAILABLE' });
  });

  it('a channel evicted while calls run on it is closed only after they end (calls racing the eviction all succeed)', async () => {
    const one = new PluginClients(clientConfig({ maxChannels: 1 }));
    try {
      const slow = keep(await serveMonitoringWebhook({ init: async () => (await sleep(300), { metadata: { slow: true } }), parse: () => ({}) }));
      const other = keep(await servePlugin([], { version: 'other' }));
      const inFlight = Array.from({ length: 5 }, () => one.monitoring(slow.endpoint).webhook.init({}));
      await sleep(50);
      const evicting = await Promise.all(Array.from({ length: 5 }, () => one.version(other.endpoint)));
      expect(evicting).toEqual(Array(5).fill('other'));
      expect(one.openChannels).toBe(1);
      await expect(Promise.all(inFlight)).resolves.toEqual(Array(5).fill({ metadata: { slow: true } }));
    } finally {
      one.close();
    }
  });
});
