import { ParseError, type ParsedEvent, type WebhookPlugin } from './types';
import { at, isObject, isoTime, md5, obj, str } from './util';

/** `[FIRING:2, RESOLVED:1] name` → `name` (Grafana's title prefix). */
function stripStandardCodes(title: string): string {
  return title
    .replace(/\[(FIRING|RESOLVED):(\d+),? ?(FIRING|RESOLVED)?:?(\d+)?\]/g, '')
    .replace(/\[([a-zA-Z]+:\d+,\s*[a-zA-Z]+:\d+)\]\s/g, '')
    .trim();
}

/** Grafana's message without its Annotations/Source/Silence lines, plus each alert's valueString. */
function standardDescription(data: Record<string, unknown>, alerts: unknown[]): string {
  const message = str(data.message);
  if (/\[no value\]/.test(message)) return 'DatasourceNoData';
  let out = message.replace(/(Annotations|Source|Silence):\s+.*/g, '').replace(/\n{3,}/g, '\n\n');
  out += 'ValueString: \n';
  for (const alert of alerts) {
    for (const element of str(obj(alert).valueString).split(', ').filter(Boolean)) out += `- ${element}\n`;
    out += '\n';
  }
  return out;
}

/** Grafana unified alerting (Alertmanager-shaped, with groupKey, title, message, alerts[].valueString). */
function parseStandard(data: Record<string, unknown>): ParsedEvent {
  const groupKey = data.groupKey;
  if (typeof groupKey !== 'string') throw new ParseError('groupKey is missing');
  const alerts = Array.isArray(data.alerts) ? data.alerts : [];
  const first = obj(alerts[0]);
  const labels = obj(data.commonLabels);
  const status = str(data.status);
  // Label names are data: own properties whatever they are called (a label may be `__proto__`).
  const additional_info: Record<string, string> = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, str(v)]));
  return {
    event_key: md5(groupKey),
    event_type: status === 'resolved' ? 'RECOVERY' : 'ALERT',
    severity: status === 'resolved' ? 'INFO' : status === 'firing' ? 'ERROR' : 'NONE',
    title: labels.alertname === undefined ? stripStandardCodes(str(data.title)) : str(labels.alertname),
    rule: str(labels.rulename ?? labels.alertname),
    image_url: str(first.panelURL),
    resource: {},
    description: standardDescription(data, alerts),
    occurred_at: first.startsAt === undefined ? new Date() : isoTime(first.startsAt, 'alerts[0].startsAt'),
    additional_info,
  };
}

/** Grafana legacy dashboard alerts (`dashboardId`, `panelId`, `ruleId`, `orgId`, `state`, `evalMatches`). */
function parseLegacy(data: Record<string, unknown>): ParsedEvent {
  for (const k of ['dashboardId', 'panelId', 'ruleId', 'orgId']) {
    if (data[k] === undefined || data[k] === null) throw new ParseError(`${k} is missing`);
  }
  const state = str(data.state);
  const additional_info: Record<string, string> = {
    dashboard_id: str(data.dashboardId),
    panel_id: str(data.panelId),
    org_id: str(data.orgId),
  };
  if (data.ruleUrl !== undefined) additional_info.rule_url = str(data.ruleUrl);
  if (data.evalMatches !== undefined) additional_info.eval_matches = JSON.stringify(data.evalMatches);
  let title = str(data.title);
  for (const code of ['[Alerting]', '[OK]', '[No Data]']) title = title.replace(code, '');
  return {
    event_key: md5(`${str(data.dashboardId)}:${str(data.panelId)}:${str(data.ruleId)}:${str(data.orgId)}`),
    event_type: state === 'ok' ? 'RECOVERY' : 'ALERT',
    severity: state === 'ok' ? 'INFO' : state === 'alerting' ? 'ERROR' : 'NONE',
    title: title.trim(),
    rule: str(data.ruleName),
    image_url: str(data.imageUrl),
    resource: {},
    description: str(data.message),
    occurred_at: new Date(),
    additional_info,
  };
}

/**
 * Grafana alert notifications, as upstream's plugin-grafana-mon-webhook maps them: one event per
 * notification (the group), keyed by md5(groupKey); legacy dashboard alerts by their ids.
 * `message_root` takes the notification from inside another envelope (e.g. `Message` of an SNS
 * notification, JSON-decoded on the way down).
 */
export const grafanaWebhook: WebhookPlugin = {
  plugin_id: 'plugin-grafana-mon-webhook',
  name: 'Grafana',
  provider: 'grafana',
  versions: ['1.0.0', '1.1.0', '1.2.0'],
  capability: {},
  options: {
    message_root: { type: 'string', description: 'Dotted path of the Grafana notification inside the posted body (JSON strings on the way are decoded)' },
  },
  metadata: () => ({}),
  parse(options, raw) {
    let data: unknown = raw;
    if (typeof options.message_root === 'string' && options.message_root) {
      for (const key of options.message_root.split('.')) {
        data = at(data, key);
        if (typeof data === 'string') {
          try {
            data = JSON.parse(data);
          } catch {
            throw new ParseError(`${key} under message_root is not JSON`);
          }
        }
      }
    }
    if (!isObject(data)) throw new ParseError(`no Grafana notification at ${str(options.message_root) || 'the body'}`);
    return { events: [data.dashboardId ? parseLegacy(data) : parseStandard(data)] };
  },
};
