// See tools/plugin/upstream-check.mjs.
import { isApiError } from '@platform/errors';
import { PluginClients, pluginClientConfigFromEnv } from '@platform/plugin';

const [costEndpoint = 'grpc://127.0.0.1:50051', webhookEndpoint = 'grpc://127.0.0.1:50052', csvUrl = 'http://127.0.0.1:18765/cost_example.csv'] = process.argv.slice(2);

let failures = 0;
function check(what: string, ok: boolean, detail?: unknown): void {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
}
const show = (title: string, value: unknown) => console.log(`--- ${title}\n${JSON.stringify(value, null, 1).slice(0, 2500)}`);

/** An Alertmanager webhook body (version 4), two alerts: one firing, one resolved. */
const alertmanagerBody = {
  receiver: 'platform',
  status: 'firing',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'KubePodCrashLooping', severity: 'critical', namespace: 'payments', pod: 'api-7d9f', container: 'api' },
      annotations: { summary: 'Pod payments/api-7d9f is crash looping', description: 'restarted 5 times in 10 minutes' },
      startsAt: '2024-05-01T10:00:00Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=x',
      fingerprint: 'a1b2c3d4e5f60708',
    },
    {
      status: 'resolved',
      labels: { alertname: 'NodeDiskFull', severity: 'warning', instance: 'node-3:9100' },
      annotations: {},
      startsAt: '2024-05-01T09:00:00Z',
      endsAt: '2024-05-01T09:30:00Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=y',
      fingerprint: '0f0e0d0c0b0a0908',
    },
  ],
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: 'http://alertmanager:9093',
  version: '4',
  groupKey: '{}:{}',
  truncatedAlerts: 0,
};

async function main(): Promise<void> {
  const clients = new PluginClients(pluginClientConfigFromEnv());
  try {
    // ---- plugin-http-file-cost-datasource
    console.log(`== ${costEndpoint} (plugin-http-file-cost-datasource)`);
    check('Health.Check', (await clients.health(costEndpoint)) === 'SERVING');
    show('ServerInfo.get_version', await clients.version(costEndpoint));
    const cost = clients.cost(costEndpoint);
    const options = { base_url: [csvUrl] };
    const info = await cost.dataSource.init({ options, domain_id: 'domain-local' });
    show('DataSource.init', info);
    check('DataSource.init metadata.currency is USD', info.metadata.currency === 'USD', info.metadata);
    check('DataSource.init metadata.data_source_rules is a list', Array.isArray(info.metadata.data_source_rules));
    await cost.dataSource.verify({ options, secret_data: {}, domain_id: 'domain-local' });
    check('DataSource.verify', true);
    const refusal = await cost.dataSource.init({ domain_id: 'domain-local' }).catch((e: unknown) => e);
    show('DataSource.init without options', isApiError(refusal) ? refusal.toEnvelope() : String(refusal));
    check(
      "the plugin's refusal is a 400 envelope with its code",
      isApiError(refusal) && refusal.status === 400 && refusal.code === 'ERROR_REQUIRED_PARAMETER',
      isApiError(refusal) ? refusal.toEnvelope() : String(refusal),
    );
    const tasks = await cost.job.getTasks({ options, secret_data: {}, domain_id: 'domain-local' });
    show('Job.get_tasks', tasks);
    check('Job.get_tasks gives one task per URL', tasks.tasks.length === options.base_url.length, tasks.tasks.length);
    check('Job.get_tasks changed', tasks.changed.length > 0 && tasks.changed[0].start === '1900-01', tasks.changed);
    let rows = 0;
    let messages = 0;
    for (const task of tasks.tasks) {
      for await (const page of cost.cost.getData({ options, secret_data: {}, task_options: task.task_options, domain_id: 'domain-local' })) {
        messages++;
        if (rows === 0) show('Cost.get_data first rows', page.results.slice(0, 3));
        rows += page.results.length;
        for (const r of page.results) {
          if (typeof r.cost !== 'number' || !/^\d{4}-\d{2}-\d{2}$/.test(r.billed_date) || typeof r.tags !== 'object') {
            check('Cost.get_data row decodes', false, r);
            break;
          }
        }
      }
    }
    check(`Cost.get_data streamed ${rows} rows in ${messages} messages`, rows > 0);

    // ---- plugin-prometheus-mon-webhook
    console.log(`\n== ${webhookEndpoint} (plugin-prometheus-mon-webhook)`);
    check('Health.Check', (await clients.health(webhookEndpoint)) === 'SERVING');
    const mon = clients.monitoring(webhookEndpoint);
    const wh = await mon.webhook.init({ options: {} });
    show('Webhook.init', wh);
    check('Webhook.init answers metadata', typeof wh.metadata === 'object');
    await mon.webhook.verify({ options: {} });
    check('Webhook.verify', true);
    const events = await mon.event.parse({ options: {}, data: alertmanagerBody });
    show('Event.parse', events);
    const [firing, resolved] = events.results;
    check('Event.parse gives one event per alert', events.results.length === 2, events.results.length);
    check('event_key is the fingerprint', firing?.event_key === 'a1b2c3d4e5f60708' && resolved?.event_key === '0f0e0d0c0b0a0908');
    check('event_type ALERT / RECOVERY', firing?.event_type === 'ALERT' && resolved?.event_type === 'RECOVERY', [firing?.event_type, resolved?.event_type]);
    check('severity decoded by name from the label', firing?.severity === 'CRITICAL' && resolved?.severity === 'WARNING', [firing?.severity, resolved?.severity]);
    check('title from the summary annotation, else the alertname', firing?.title === 'Pod payments/api-7d9f is crash looping' && resolved?.title === 'NodeDiskFull', [firing?.title, resolved?.title]);
    check('resource is a JSON object', typeof firing?.resource === 'object' && firing.resource !== null, firing?.resource);
    const garbage = await mon.event.parse({ options: {}, data: { not: 'alertmanager' } }).catch((e: unknown) => e);
    show('Event.parse of a body that is not Alertmanager', isApiError(garbage) ? garbage.toEnvelope() : garbage);
    check('it never is a 500', !isApiError(garbage) || garbage.status !== 500);
  } finally {
    clients.close();
  }
  console.log(failures ? `\n${failures} check(s) failed` : '\nevery check passed');
  process.exitCode = failures ? 1 : 0;
}

main().catch((e: unknown) => {
  console.error(isApiError(e) ? JSON.stringify(e.toEnvelope()) : e);
  process.exitCode = 1;
});
