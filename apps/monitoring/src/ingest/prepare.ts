import { generateId } from '@platform/core';
import { ApiError } from '@platform/errors';
import { chooseMonitoringPlugin, monitoringClient, parsedEventOf, type RemotePlugins } from '../plugins/remote';
import type { PluginChoice } from '@platform/plugin';
import type { PluginRegistry, Struct } from '../plugins/registry';
import { EVENT_TYPES, ParseError, SEVERITIES, type ParseContext, type ParsedEvent, type ParseResult, type WebhookPlugin } from '../plugins/webhook';
import type { DeliveryJob } from './job';

/** An event row as the store writes it. */
export interface PreparedEvent {
  event_id: string;
  event_key: string;
  event_type: string;
  title: string;
  description: string;
  severity: string;
  rule: string;
  image_url: string;
  resource: { resource_id?: string; resource_type?: string; name?: string };
  resource_id: string;
  provider: string;
  account: string;
  additional_info: Struct;
  occurred_at: string | null;
  delivery_seq: number;
}

export type Outcome = 'STORED' | 'PARSE_ERROR' | 'NO_EVENTS' | 'SUBSCRIPTION_CONFIRMED' | 'UNSUBSCRIBED' | 'RECOVERY_WITHOUT_ALERT';

/** A delivery parsed and ready to store. */
export interface PreparedDelivery {
  job: DeliveryJob;
  outcome: Outcome;
  error: string;
  /** For the log only: what an outbound call of the plugin met (never stored, never answered). */
  detail?: string;
  events: PreparedEvent[];
  raw_data: Struct;
}

const MAX_TEXT = 100_000;

/** Postgres text and jsonb refuse U+0000; payloads are otherwise kept as sent. */
export function sanitize<T>(v: T): T {
  if (typeof v === 'string') return (v.includes('\u0000') ? v.replace(/\u0000/g, '') : v) as T;
  if (Array.isArray(v)) return v.map(sanitize) as T;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[sanitize(k)] = sanitize(x);
    return out as T;
  }
  return v;
}

/** Whether sanitize would change `v` (a U+0000 in a string or a key) or not copy it faithfully (a `__proto__` key). */
function needsCopy(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) {
    for (const x of v) if (needsCopy(x)) return true;
    return false;
  }
  if (v && typeof v === 'object') {
    for (const k of Object.keys(v)) if (k === '__proto__' || k.includes('\u0000') || needsCopy((v as Record<string, unknown>)[k])) return true;
  }
  return false;
}

/** sanitize's result without the copy when it would be equal: for a payload nothing will change (a remote plugin's). */
export function sanitizedShared<T>(v: T): T {
  return needsCopy(v) ? sanitize(v) : v;
}

const text = (v: unknown, max = MAX_TEXT) => sanitize(typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v)).slice(0, max);

function toRow(e: ParsedEvent, seq: number): PreparedEvent {
  if (!e || typeof e.event_key !== 'string' || !e.event_key) throw new ParseError('the plugin answered an event without event_key');
  if (!EVENT_TYPES.includes(e.event_type)) throw new ParseError(`the plugin answered an unknown event_type ${String(e.event_type)}`);
  const severity = e.severity ?? 'NONE';
  if (!SEVERITIES.includes(severity)) throw new ParseError(`the plugin answered an unknown severity ${String(severity)}`);
  const occurred = e.occurred_at ? new Date(e.occurred_at) : null;
  const resource = sanitize(Object.fromEntries(Object.entries(e.resource ?? {}).filter(([, v]) => v !== undefined && v !== '')));
  return {
    event_id: generateId('event'),
    event_key: text(e.event_key, 255),
    event_type: e.event_type,
    title: text(e.title, 1000),
    description: text(e.description),
    severity,
    rule: text(e.rule, 1000),
    image_url: text(e.image_url, 2000),
    resource,
    resource_id: text(resource.resource_id, 1000),
    provider: text(e.provider, 255),
    account: text(e.account, 255),
    additional_info: sanitize(e.additional_info ?? {}),
    occurred_at: occurred && !Number.isNaN(occurred.getTime()) ? occurred.toISOString() : null,
    delivery_seq: seq,
  };
}

/** Upstream's event for a payload its plugin could not parse. */
function errorEvent(webhookName: string, message: string): PreparedEvent {
  return toRow(
    {
      event_key: generateId('error'),
      event_type: 'ERROR',
      title: `Webhook Event Parsing Error - ${webhookName}`,
      description: message,
      severity: 'CRITICAL',
      occurred_at: new Date(),
    },
    0,
  );
}

/** The built-in a delivery is parsed with: AUTO follows the latest version, a pinned version must still exist. */
function checkBuiltinVersion(plugin: WebhookPlugin, job: DeliveryJob): WebhookPlugin {
  if (job.webhook.upgrade_mode !== 'AUTO' && !plugin.versions.includes(job.webhook.version)) {
    throw new ParseError(`version ${job.webhook.version} of ${plugin.plugin_id} is not installed`);
  }
  return plugin;
}

/**
 * The plugin is unavailable (not answering, its endpoints unreadable): not the payload's fault. The
 * delivery is not stored; its job waits and runs again (see worker-runtime), spending no attempt.
 */
export class PluginUnavailable extends Error {}

/**
 * The plugin answered something that is no answer (garbage, past the size bound): its job fails and
 * is retried with the queue's backoff, then kept as a dead letter; the worker goes on.
 */
export class PluginBadAnswer extends Error {}

const BAD_ANSWERS = new Set(['ERROR_PLUGIN_INVALID_RESPONSE', 'ERROR_PLUGIN_RESPONSE_TOO_LARGE']);

/**
 * What a failed call to a published plugin means for the delivery: unavailable (503) waits, a bad
 * answer fails the job, anything else the plugin said (its refusal, its own error) is the delivery's
 * ERROR event, as upstream makes it. Texts come redacted from libs/plugin.
 */
function remoteFailure(e: unknown): Error {
  if (!(e instanceof ApiError)) return e as Error;
  if (e.status === 503) return new PluginUnavailable(e.message);
  if (BAD_ANSWERS.has(e.code)) return new PluginBadAnswer(`${e.code}: ${e.message}`);
  return new ParseError(e.message);
}

type Choice = PluginChoice<WebhookPlugin>;

/** Parses a delivery's payload with the plugin its webhook's plugin_info names (chosen on every delivery). */
export class DeliveryParser {
  constructor(
    private readonly registry: PluginRegistry<WebhookPlugin>,
    private readonly ctx: ParseContext,
    private readonly remote?: RemotePlugins,
  ) {}

  /** The plugin a delivery is parsed with (its webhook's plugin_info; chosen on every delivery). */
  async choose(job: DeliveryJob): Promise<Choice> {
    const w = job.webhook;
    try {
      // Without published plugins (or with "nothing published" cached by the resolver) a built-in costs a map lookup.
      return await chooseMonitoringPlugin(this.remote, this.registry, w.domain_id, w.plugin_id, w.version, w.upgrade_mode);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw new ParseError(`webhook plugin ${w.plugin_id} is not installed`);
      throw remoteFailure(e);
    }
  }

  async parse(job: DeliveryJob, choice: Choice): Promise<ParseResult> {
    const w = job.webhook;
    if (choice.kind === 'builtin') return checkBuiltinVersion(choice.plugin, job).parse(w.options, job.data, this.ctx);
    let answer;
    try {
      answer = await monitoringClient(this.remote!, choice.endpoint, w.plugin_id).event.parse({ options: w.options, data: job.data });
    } catch (e) {
      throw remoteFailure(e);
    }
    return { events: answer.results.map(parsedEventOf) };
  }
}

/**
 * Parses one delivery with its webhook's plugin. Whatever goes wrong in the plugin — a payload of
 * another format, a bug, a refused SNS confirmation — becomes upstream's ERROR event: nothing that
 * was accepted disappears.
 */
export async function prepareDelivery(parser: DeliveryParser, job: DeliveryJob): Promise<PreparedDelivery> {
  let raw_data: Struct | undefined;
  try {
    const choice = await parser.choose(job);
    // A built-in may change job.data as it parses: it keeps a copy (sanitize rebuilds every object and
    // array). A remote plugin gets the bytes, job.data stays as it is: a copy only when one must clean it.
    raw_data = choice.kind === 'builtin' ? sanitize(job.data) : sanitizedShared(job.data);
    const result = await parser.parse(job, choice);
    const events = result.events.map((e, i) => toRow(e, i));
    const outcome: Outcome = events.length ? 'STORED' : ((result.outcome as Outcome | undefined) ?? 'NO_EVENTS');
    return { job, outcome, error: '', events, raw_data };
  } catch (e) {
    if (e instanceof PluginUnavailable || e instanceof PluginBadAnswer) throw e; // not the payload's: the job's
    const message = e instanceof Error ? e.message : String(e);
    const detail = e instanceof ParseError ? e.detail : undefined;
    return { job, outcome: 'PARSE_ERROR', error: text(message, 2000), ...(detail && { detail }), events: [errorEvent(job.webhook.name, message)], raw_data: raw_data ?? sanitize(job.data) };
  }
}
