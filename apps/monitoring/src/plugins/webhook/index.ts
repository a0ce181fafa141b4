import { PluginRegistry } from '../registry';
import { apiDirectWebhook } from './api-direct';
import { awsSnsWebhook } from './aws-sns';
import { grafanaWebhook } from './grafana';
import { prometheusWebhook } from './prometheus';
import type { WebhookPlugin } from './types';

export * from './types';

/** The built-in webhook plugins, by upstream's plugin ids. */
export function webhookPlugins(): PluginRegistry<WebhookPlugin> {
  return new PluginRegistry('webhook', [prometheusWebhook, grafanaWebhook, awsSnsWebhook, apiDirectWebhook]);
}
