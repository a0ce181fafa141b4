// What the plugin ingestion benchmark's plugin process loads (bundled as the apps are): the kit and
// the built-in Prometheus webhook's parser, so the plugin parses exactly what the built-in does and
// the difference measured is the gRPC hop (resolver, codec, call) alone.
export { serveMonitoringWebhook } from '@platform/plugin-kit';
export { prometheusWebhook } from '../../../apps/monitoring/src/plugins/webhook/prometheus';
