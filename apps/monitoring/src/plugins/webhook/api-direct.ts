import { setOwn, unsafeSegment } from '@platform/core';
import { errors } from '@platform/errors';
import type { Struct } from '../registry';
import { EVENT_TYPES, ParseError, SEVERITIES, type EventType, type ParsedEvent, type Severity, type WebhookPlugin } from './types';
import { at, isObject, isoTime, obj, str } from './util';

const TEMPLATE = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

/** `{{ a.b }}` placeholders replaced by the payload's values (objects as JSON, missing as ''). */
function render(template: string, data: Struct): string {
  return template.replace(TEMPLATE, (_m, path: string) => {
    const v = at(data, path);
    return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
}

/** Upstream's `convert_data`: each event field (and each key of resource / additional_info) from a template. */
function convert(data: Struct, spec: Struct): Struct {
  const out: Struct = {};
  for (const [key, template] of Object.entries(spec)) {
    if ((key === 'resource' || key === 'additional_info') && isObject(template)) {
      out[key] = Object.fromEntries(Object.entries(template).map(([k, t]) => [k, render(str(t), data)]));
    } else {
      out[key] = render(str(template), data);
    }
  }
  return out;
}

const CONVERTIBLE = new Set(['event_key', 'event_type', 'title', 'description', 'severity', 'rule', 'image_url', 'resource', 'provider', 'account', 'occurred_at', 'additional_info']);

/**
 * Events posted in upstream's own event format (`{event_key, event_type, title, description,
 * severity, rule, image_url, resource: {resource_id, resource_type, name}, occurred_at,
 * additional_info}`), as plugin-api-direct-mon-webhook takes them; `provider` and `account` are
 * taken too. Options: `load_json` (keys whose values are JSON strings to decode first) and
 * `convert_data` (templates `{{ key }}` building the event from another shape).
 */
export const apiDirectWebhook: WebhookPlugin = {
  plugin_id: 'plugin-api-direct-mon-webhook',
  name: 'API Direct',
  provider: '',
  versions: ['1.0.0', '1.1.0', '1.2.0'],
  capability: {},
  options: {
    load_json: { type: 'string_list', description: 'Dotted keys whose values are JSON strings, decoded before anything else' },
    convert_data: { type: 'object', description: 'Event field → template (`{{ key.path }}`); resource and additional_info take an object of templates' },
  },
  metadata: () => ({}),
  checkOptions(options) {
    (Array.isArray(options.load_json) ? options.load_json : []).forEach((path, i) => {
      const unsafe = typeof path === 'string' ? unsafeSegment(path) : undefined;
      if (unsafe !== undefined) throw errors.invalidParameter(`plugin_info.options.load_json[${i}]`, `"${unsafe}" is not allowed in a key`);
    });
    for (const [key, template] of Object.entries(obj(options.convert_data))) {
      if (!CONVERTIBLE.has(key)) throw errors.invalidParameter(`plugin_info.options.convert_data.${key}`, 'not an event field');
      const ok = (key === 'resource' || key === 'additional_info') && isObject(template) ? Object.values(template).every((t) => typeof t === 'string') : typeof template === 'string';
      if (!ok) throw errors.invalidParameter(`plugin_info.options.convert_data.${key}`, 'must be a template string (or an object of them)');
    }
  },
  parse(options, raw) {
    let data: Struct = structuredClone(raw);
    for (const path of Array.isArray(options.load_json) ? (options.load_json as string[]) : []) {
      const keys = path.split('.');
      const parent = keys.length > 1 ? at(data, keys.slice(0, -1).join('.')) : data;
      const last = keys[keys.length - 1];
      if (isObject(parent) && Object.hasOwn(parent, last) && typeof parent[last] === 'string') {
        try {
          setOwn(parent, last, JSON.parse(parent[last] as string));
        } catch {
          throw new ParseError(`${path} is not JSON`);
        }
      }
    }
    if (isObject(options.convert_data)) data = convert(data, options.convert_data);

    const event_key = str(data.event_key);
    if (!event_key) throw new ParseError('event_key is required');
    if (typeof data.title !== 'string') throw new ParseError('title is required');
    const event_type = (data.event_type ?? 'ALERT') as EventType;
    if (!EVENT_TYPES.includes(event_type)) throw new ParseError(`event_type must be one of ${EVENT_TYPES.join(', ')}`);
    const severity = (data.severity ?? 'NONE') as Severity;
    if (!SEVERITIES.includes(severity)) throw new ParseError(`severity must be one of ${SEVERITIES.join(', ')}`);
    const resource = obj(data.resource);
    const additional_info = Object.fromEntries(Object.entries(obj(data.additional_info)).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    const event: ParsedEvent = {
      event_key,
      event_type,
      title: data.title,
      description: str(data.description),
      severity,
      rule: str(data.rule),
      image_url: str(data.image_url),
      resource: Object.fromEntries(
        (['resource_id', 'resource_type', 'name'] as const).filter((k) => resource[k] !== undefined && resource[k] !== '').map((k) => [k, str(resource[k])]),
      ),
      provider: str(data.provider),
      account: str(data.account),
      occurred_at: data.occurred_at === undefined || data.occurred_at === '' ? null : isoTime(data.occurred_at, 'occurred_at'),
      additional_info,
    };
    return { events: [event] };
  },
};
