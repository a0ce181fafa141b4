import { ParseError, type ParsedEvent, type Severity, type WebhookPlugin } from './types';
import { isObject, isoTime, obj, str } from './util';

const SEVERITY: Record<string, Severity> = { critical: 'CRITICAL', error: 'ERROR', warning: 'WARNING', info: 'INFO' };

/**
 * Prometheus Alertmanager's webhook_config payload (`{version: "4", status, alerts: [...], ...}`), as
 * upstream's plugin-prometheus-mon-webhook maps it: one event per alert, keyed by its fingerprint.
 */
export const prometheusWebhook: WebhookPlugin = {
  plugin_id: 'plugin-prometheus-mon-webhook',
  name: 'Prometheus Alertmanager',
  provider: 'prometheus',
  versions: ['1.0.0', '1.1.0'],
  capability: {},
  options: {},
  metadata: () => ({}),
  parse(_options, data) {
    const alerts = data.alerts;
    // Upstream answers no event for a payload without alerts; Alertmanager never sends one, so here it is an error event.
    if (!Array.isArray(alerts) || alerts.length === 0) throw new ParseError('not an Alertmanager payload: `alerts` is missing or empty');
    const events = alerts.map((alert, i): ParsedEvent => {
      if (!isObject(alert)) throw new ParseError(`alerts[${i}] is not an object`);
      const fingerprint = str(alert.fingerprint);
      if (!fingerprint) throw new ParseError(`alerts[${i}].fingerprint is missing`);
      const labels = obj(alert.labels);
      const annotations = obj(alert.annotations);
      const additional_info: Record<string, string> = {};
      if (annotations.runbook_url !== undefined) additional_info.runbook_url = str(annotations.runbook_url);
      if (alert.generatorURL !== undefined) additional_info.generator_url = str(alert.generatorURL);
      if (alert.endsAt !== undefined) additional_info.ends_at = str(alert.endsAt);
      // Upstream reads the resource from the labels, keeping only resource_id, name and resource_type.
      const resource: ParsedEvent['resource'] = {};
      for (const k of ['resource_id', 'name', 'resource_type'] as const) if (labels[k] !== undefined) resource[k] = str(labels[k]);
      return {
        event_key: fingerprint,
        event_type: alert.status === 'resolved' ? 'RECOVERY' : 'ALERT',
        severity: SEVERITY[str(labels.severity)] ?? 'NONE',
        title: str(annotations.summary),
        description: str(annotations.description),
        rule: str(labels.rule_group),
        resource,
        occurred_at: alert.startsAt === undefined ? new Date() : isoTime(alert.startsAt, `alerts[${i}].startsAt`),
        additional_info,
      };
    });
    return { events };
  },
};
