// Every plugin call a client makes is observed (issue #31): platform_plugin_call_duration_seconds by
// plugin, method and outcome, against a real plugin server.
import { pluginCallDuration } from '@platform/core';
import { PluginClients } from '@platform/plugin';
import { fail, serveCostDataSource, type PluginServer } from './index';
import { clientConfig } from './test-support';

/** The calls observed so far, as `plugin method code` → count. */
async function observed(): Promise<Record<string, number>> {
  const { values } = await pluginCallDuration.get();
  return Object.fromEntries(
    values.filter((v) => v.metricName === 'platform_plugin_call_duration_seconds_count').map((v) => [`${v.labels.plugin_id} ${v.labels.method} ${v.labels.code}`, v.value]),
  );
}

describe('plugin call metrics', () => {
  let server: PluginServer;
  const clients = new PluginClients(clientConfig());
  beforeAll(async () => {
    server = await serveCostDataSource({
      init: () => ({}),
      getTasks: () => {
        throw fail.invalidParameter('options.secret', 'refused');
      },
      getData: function* () {
        yield { results: [{ cost: 1, provider: 'aws', billed_date: '2024-01-01' }] };
        yield { results: [{ cost: 2, provider: 'aws', billed_date: '2024-01-02' }] };
      },
    });
  });
  afterAll(() => {
    clients.close();
    server?.kill();
  });

  it('counts each unary call and stream by plugin, method and outcome (OK or the envelope code), under the endpoint when no plugin id is given', async () => {
    pluginCallDuration.reset();
    const c = clients.cost(server.endpoint, 'plugin-aws-cost');
    await c.dataSource.init({});
    await c.dataSource.init({});
    await expect(c.job.getTasks({})).rejects.toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    let pages = 0;
    for await (const _ of c.cost.getData({})) pages++;
    expect(pages).toBe(2);
    // A consumer that leaves a stream early: the call ends there, OK.
    for await (const _ of c.cost.getData({})) break;
    await clients.cost(server.endpoint).dataSource.verify({});
    const target = new URL(server.endpoint.replace(/^grpc/, 'http')).host;
    expect(await observed()).toEqual({
      'plugin-aws-cost DataSource.init OK': 2,
      'plugin-aws-cost Job.get_tasks ERROR_INVALID_PARAMETER': 1,
      'plugin-aws-cost Cost.get_data OK': 2,
      [`${target} DataSource.verify OK`]: 1,
    });
  });
});
