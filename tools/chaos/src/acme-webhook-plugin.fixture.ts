// A webhook plugin written with the kit, run as its own process by the chaos tests (bundled with
// esbuild): serves on PORT, answers Event.parse with one event per alert, prints `plugin ready`.
import { fail, serveMonitoringWebhook } from '@platform/plugin-kit';

async function main() {
  const server = await serveMonitoringWebhook(
    {
      init: () => ({ metadata: { kind: 'acme' } }),
      parse: (r) => {
        const alerts = r.data.alerts;
        if (!Array.isArray(alerts)) throw fail.invalidArgument('no alerts in the payload');
        return {
          results: alerts.map((x) => {
            const a = x as { id: string; host: string };
            return {
              event_key: String(a.id),
              event_type: 'ALERT',
              title: `Alert ${a.id}`,
              severity: 'CRITICAL' as const,
              resource: { resource_id: String(a.host), resource_type: 'host', name: String(a.host) },
              occurred_at: new Date().toISOString(),
            };
          }),
        };
      },
    },
    { port: Number(process.env.PORT) },
  );
  process.stdout.write(`plugin ready ${server.endpoint}\n`);
  process.once('SIGTERM', () => void server.stop(1000).then(() => process.exit(0)));
}

void main();
