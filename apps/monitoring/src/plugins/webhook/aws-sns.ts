import { isOutboundRefused, OUTBOUND_REFUSED_MESSAGE, withHosts } from '@platform/net';
import { httpGet } from '../outbound';
import { ParseError, type ParseContext, type ParsedEvent, type ParseResult, type Severity, type WebhookPlugin } from './types';
import { isObject, isoTime, md5, obj, str } from './util';

const AWS_SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;

/**
 * Confirms an SNS subscription by fetching its SubscribeURL. Only AWS's own SNS endpoints over https,
 * or a host listed in SNS_CONFIRM_ALLOWED_HOSTS: the URL is in the posted body, so anybody with the
 * webhook URL could otherwise make the worker fetch any address.
 */
async function confirmSubscription(subscribeUrl: string, ctx: ParseContext): Promise<void> {
  let url: URL;
  try {
    url = new URL(subscribeUrl);
  } catch {
    throw new ParseError(`SubscribeURL is not a URL: ${subscribeUrl}`);
  }
  const listed = ctx.snsConfirmHosts.includes(url.host.toLowerCase()) || ctx.snsConfirmHosts.includes(url.hostname.toLowerCase());
  const aws = url.protocol === 'https:' && AWS_SNS_HOST.test(url.hostname.toLowerCase());
  if (!aws && !listed) throw new ParseError(`SubscribeURL host ${url.host} is not an AWS SNS endpoint; confirmation refused`);
  // A listed host may be private (an SNS emulator in the cluster); link-local and metadata never are.
  const policy = listed ? withHosts(ctx.outbound, [url.hostname]) : ctx.outbound;
  const failed = (detail: string) => new ParseError(`SNS subscription confirmation failed: ${OUTBOUND_REFUSED_MESSAGE}`, detail);
  let status: number;
  try {
    ({ status } = await httpGet(url, { policy, timeoutMs: 10_000, key: 'SubscribeURL' }));
  } catch (e) {
    if (isOutboundRefused(e)) throw failed(e.detail);
    throw e;
  }
  if (status < 200 || status >= 300) throw failed(`SubscribeURL answered HTTP ${status}`);
}

/** CloudWatch alarm state change (upstream's cloudwatch_event_manager): one event per alarmed dimension. */
function cloudWatchEvents(message: Record<string, unknown>): ParsedEvent[] {
  const trigger = obj(message.Trigger);
  const metrics = Array.isArray(trigger.Metrics) ? trigger.Metrics.map((m) => obj(obj(obj(m).MetricStat).Metric)) : [];
  const namespace = str(trigger.Namespace) || str(metrics.find((m) => m.Namespace)?.Namespace);
  const metricName = str(trigger.MetricName) || str(metrics.find((m) => m.MetricName)?.MetricName);
  const region = str(message.Region);
  const account = str(message.AWSAccountId);
  const alarm = str(message.AlarmName);
  const state = str(message.NewStateValue, 'INSUFFICIENT_DATA');
  const occurred = message.StateChangeTime ? isoTime(message.StateChangeTime, 'StateChangeTime') : new Date().toISOString();
  // Upstream's key: account, resource, alarm and the 10-minute window of the state change.
  const window = Math.floor(Date.parse(occurred) / 1000 / 600) * 100;
  const severity: Severity = state === 'OK' ? 'INFO' : state === 'ALARM' || state === 'ALERT' ? 'ERROR' : 'NOT_AVAILABLE';

  const additional_info: Record<string, unknown> = {};
  for (const k of ['OldStateValue', 'AlarmName', 'Region', 'AWSAccountId', 'AlarmDescription', 'AlarmArn']) {
    if (message[k]) additional_info[k] = message[k];
  }
  if (metricName && namespace) Object.assign(additional_info, { MetricName: metricName, Namespace: namespace });

  const dimensions = [
    ...(Array.isArray(trigger.Dimensions) ? trigger.Dimensions : []),
    ...metrics.flatMap((m) => (Array.isArray(m.Dimensions) ? m.Dimensions : [])),
  ].map(obj);
  // An alarm without dimensions makes no event upstream; here it makes one without a resource.
  const targets = dimensions.length ? dimensions : [{}];
  return targets.map((d) => ({
    event_key: md5(`${account}:${str(d.value)}:${alarm}:${window}`),
    event_type: state === 'OK' ? 'RECOVERY' : 'ALERT',
    severity,
    resource: d.value === undefined ? {} : { resource_id: str(d.value), resource_type: namespace, name: `[${namespace}] ${str(d.name)}=${str(d.value)} (${region})` },
    description: str(message.NewStateReason),
    title: alarm,
    rule: alarm,
    provider: 'aws',
    account,
    occurred_at: occurred,
    additional_info,
  }));
}

/** AWS Health (Personal Health Dashboard) events delivered through EventBridge → SNS. */
function healthEvent(message: Record<string, unknown>): ParsedEvent {
  const detail = obj(message.detail);
  const category = str(detail.eventTypeCategory);
  const account = str(message.account);
  const descriptions = Array.isArray(detail.eventDescription) ? detail.eventDescription.map((d) => str(obj(d).latestDescription)) : [];
  const additional_info: Record<string, unknown> = {};
  for (const k of ['id', 'account', 'region']) if (message[k]) additional_info[k] = message[k];
  for (const k of ['service', 'eventTypeCode']) if (detail[k]) additional_info[k] = detail[k];
  if (Array.isArray(detail.affectedEntities)) additional_info.affectedEntities = detail.affectedEntities.map((e) => str(obj(e).entityValue));
  const start = str(detail.startTime);
  return {
    event_key: str(detail.eventArn),
    event_type: 'ALERT',
    severity: category === 'issue' || category === 'scheduledChange' ? 'ERROR' : 'INFO',
    resource: { resource_id: str(detail.eventArn), resource_type: str(message.source, 'aws.health') },
    description: `${descriptions.join(' ')} (Account:${account})`,
    title: str(detail.eventTypeCode)
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
      .join(' '),
    rule: category,
    provider: 'aws',
    account,
    occurred_at: start ? isoTime(start, 'detail.startTime') : new Date(),
    additional_info,
  };
}

/**
 * Amazon SNS HTTP(S) deliveries, as upstream's plugin-aws-sns-mon-webhook handles them: the
 * SubscriptionConfirmation handshake, then Notifications whose `Message` is a CloudWatch alarm or an
 * AWS Health event.
 */
export const awsSnsWebhook: WebhookPlugin = {
  plugin_id: 'plugin-aws-sns-mon-webhook',
  name: 'AWS SNS',
  provider: 'aws',
  versions: ['1.0.0', '1.1.0'],
  capability: {},
  options: {},
  metadata: () => ({}),
  async parse(_options, data, ctx): Promise<ParseResult> {
    if (data.Type === 'SubscriptionConfirmation') {
      await confirmSubscription(str(data.SubscribeURL), ctx);
      return { events: [], outcome: 'SUBSCRIPTION_CONFIRMED' };
    }
    if (data.Type === 'UnsubscribeConfirmation') return { events: [], outcome: 'UNSUBSCRIBED' };
    let message: unknown = data;
    if (data.Message !== undefined) {
      try {
        message = typeof data.Message === 'string' ? JSON.parse(data.Message) : data.Message;
      } catch {
        throw new ParseError('Message is not JSON');
      }
    }
    if (!isObject(message)) throw new ParseError('Message is not a JSON object');
    if (typeof message.AlarmArn === 'string' && message.AlarmArn.split(':')[2] === 'cloudwatch') return { events: cloudWatchEvents(message) };
    if (typeof message.source === 'string' && message.source.split('.')[1] === 'health') return { events: [healthEvent(message)] };
    throw new ParseError('An unknown data has occurred: neither a CloudWatch alarm nor an AWS Health event');
  },
};
