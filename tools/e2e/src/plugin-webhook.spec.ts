import { PlatformClient } from '@platform/client';
import { fail, serveMonitoringWebhook, type PluginServer } from '@platform/plugin-kit';
import { waitFor } from '@platform/testing';
import { call, checkedFetch, startPlatform, type Platform } from './platform';

/**
 * A webhook served by a published plugin, end to end through nginx: a TypeScript plugin (the kit)
 * runs; a supervisor publishes its endpoint (plugin module); a workspace owner creates a webhook of
 * that plugin (monitoring calls Webhook.init: the metadata); a payload posted to the webhook URL is
 * parsed by the plugin's Event.parse in monitoring's worker and becomes an event.
 */
describe('a published webhook plugin end to end: publish → webhook create → post → event', () => {
  let p: Platform;
  let plugin: PluginServer;
  let token: string;
  let domainToken: string;
  const parsed: unknown[] = [];

  beforeAll(async () => {
    plugin = await serveMonitoringWebhook({
      init: (r) => ({ metadata: { plugin: 'e2e-acme', options: Object.keys(r.options) } }),
      parse: (r) => {
        parsed.push(r.data);
        const alerts = r.data.alerts;
        if (!Array.isArray(alerts)) throw fail.invalidArgument('no alerts');
        return {
          results: alerts.map((a) => {
            const alert = a as { id: string; host: string };
            return {
              event_key: `e2e-${alert.id}`,
              event_type: 'ALERT',
              title: `Alert ${alert.id}`,
              severity: 'ERROR' as const,
              resource: { resource_id: alert.host, resource_type: 'host', name: alert.host },
              rule: 'e2e-rule',
              occurred_at: '2024-06-01T12:00:00Z',
              additional_info: { source: 'e2e' },
              provider: 'acme',
            };
          }),
        };
      },
    });
    p = await startPlatform({ LOG_LEVEL: 'info' });
    const api = new PlatformClient({ endpoint: p.base, fetch: checkedFetch });
    token = (await api.login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password', workspaceId: 'workspace-local' })).access_token;
    domainToken = (await new PlatformClient({ endpoint: p.base, fetch: checkedFetch }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password' })).access_token;
    p.admin('project', 'create', '--domain-id', 'domain-local', '--workspace-id', 'workspace-local', '--project-id', 'project-plugin-e2e', '--name', 'Plugin E2E');
  });
  afterAll(async () => {
    plugin?.kill();
    await p?.stop();
  });

  it('publishes the plugin, creates a webhook of it and turns a post into an event', async () => {
    const published = await call(
      p.base,
      '/plugin/v1/supervisor/publish',
      { name: 'e2e', hostname: 'e2e-plugin-host', secret_key: 'e2e-plugin-supervisor-secret', plugin_info: [{ plugin_id: 'plugin-acme-mon-webhook', version: '1.2.0', state: 'ACTIVE', endpoint: plugin.endpoint }] },
      domainToken,
    );
    expect(published.status).toBe(200);

    const hook = await call(p.base, '/monitoring/v1/webhook/create', { name: 'acme', plugin_info: { plugin_id: 'plugin-acme-mon-webhook', options: { region: 'eu' } }, project_id: 'project-plugin-e2e' }, token);
    expect(hook.status).toBe(200);
    expect(hook.body.plugin_info).toEqual({ plugin_id: 'plugin-acme-mon-webhook', version: '1.2.0', options: { region: 'eu' }, metadata: { plugin: 'e2e-acme', options: ['region'] }, upgrade_mode: 'AUTO' });

    const posted = await fetch(hook.body.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ alerts: [{ id: 'a1', host: 'web-1' }] }) });
    expect(posted.status).toBe(200);
    const events = await waitFor(async () => {
      const res = await call(p.base, '/monitoring/v1/event/list', { webhook_id: hook.body.webhook_id }, token);
      return res.body.total_count > 0 ? res.body.results : undefined;
    }, 30_000, 'the event');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event_key: 'e2e-a1',
      event_type: 'ALERT',
      severity: 'ERROR',
      title: 'Alert a1',
      rule: 'e2e-rule',
      provider: 'acme',
      resource: { resource_id: 'web-1', resource_type: 'host', name: 'web-1' },
      additional_info: { source: 'e2e' },
      project_id: 'project-plugin-e2e',
      webhook_id: hook.body.webhook_id,
    });
    expect(parsed).toEqual([{ alerts: [{ id: 'a1', host: 'web-1' }] }]);
  });
});
