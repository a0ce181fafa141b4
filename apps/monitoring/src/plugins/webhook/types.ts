import type { PluginBase, Struct } from '../registry';
import type { OutboundPolicy } from '@platform/net';

export const EVENT_TYPES = ['ALERT', 'RECOVERY', 'ERROR'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const SEVERITIES = ['CRITICAL', 'ERROR', 'WARNING', 'INFO', 'NOT_AVAILABLE', 'NONE'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** One event as a plugin parses it (upstream's EventResponse); monitoring adds the rest. */
export interface ParsedEvent {
  event_key: string;
  event_type: EventType;
  title: string;
  description?: string;
  severity?: Severity;
  rule?: string;
  image_url?: string;
  resource?: { resource_id?: string; resource_type?: string; name?: string };
  provider?: string;
  account?: string;
  /** ISO 8601 (or a Date); missing means unknown. */
  occurred_at?: string | Date | null;
  additional_info?: Struct;
}

export interface ParseResult {
  events: ParsedEvent[];
  /** Why a delivery made no event although it parsed (e.g. an SNS subscription handshake). */
  outcome?: string;
}

/** What a plugin may use while parsing: the outbound policy of this deployment. */
export interface ParseContext {
  outbound: OutboundPolicy;
  /** Extra hosts (`host` or `host:port`) an SNS SubscribeURL may point at, besides AWS's own. */
  snsConfirmHosts: string[];
}

/**
 * A payload the plugin cannot turn into events: it becomes upstream's ERROR event, whose text the
 * tenant reads. `detail` is for the log alone (what an outbound call met).
 */
export class ParseError extends Error {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** A webhook plugin: turns a posted payload of its format into events. */
export interface WebhookPlugin extends PluginBase {
  parse(options: Struct, data: Struct, ctx: ParseContext): Promise<ParseResult> | ParseResult;
}
