import { errors } from '@platform/errors';
import { OutboundRefused, urlForDisplay } from '@platform/net';
import { httpGet } from '../outbound';
import type { Struct } from '../registry';
import type { DataSourcePlugin } from './types';

const PLUGIN_ID = 'plugin-prometheus-mon-datasource';

/** The instant-query URL of a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics). */
function queryUrl(base: URL, query: string): URL {
  const u = new URL(base.toString());
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/v1/query`;
  u.search = new URLSearchParams({ query }).toString();
  return u;
}

/**
 * Prometheus as a METRIC data source. verify-plugin runs the instant query `vector(1)` against
 * `options.url` and needs the API's success envelope back: `{"status":"success","data":{...}}`.
 */
export const prometheusDataSource: DataSourcePlugin = {
  plugin_id: PLUGIN_ID,
  name: 'Prometheus',
  provider: 'prometheus',
  versions: ['1.0.0', '1.1.0'],
  monitoring_type: 'METRIC',
  capability: { supported_schema: [], use_resource_secret: false, monitoring_type: 'METRIC' },
  options: {
    url: { type: 'string', required: true, description: 'Base URL of the Prometheus HTTP API, e.g. http://prometheus:9090' },
    timeout_ms: { type: 'number', description: 'Time limit of each call in milliseconds (default 5000, at most 30000)' },
  },
  metadata: () => ({
    supported_stat: ['AVERAGE', 'MAX', 'MIN', 'SUM'],
    supported_resource_type: [],
    required_keys: ['url'],
    query_api: 'prometheus/v1',
  }),
  checkOptions(options: Struct) {
    const t = options.timeout_ms;
    if (t !== undefined && (typeof t !== 'number' || t <= 0 || t > 30_000)) {
      throw errors.invalidParameter('plugin_info.options.timeout_ms', 'must be between 1 and 30000');
    }
    try {
      const u = new URL(String(options.url));
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw errors.invalidParameter('plugin_info.options.url', 'must be an http(s) URL');
    }
  },
  async verify(options, ctx) {
    const key = 'plugin_info.options.url';
    const base = new URL(String(options.url));
    const res = await httpGet(queryUrl(base, 'vector(1)'), { policy: ctx.outbound, timeoutMs: Number(options.timeout_ms ?? 5000), key });
    let body: { status?: unknown; data?: unknown } | undefined;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    // Not the API's success envelope: the same refusal as an unreachable source, quoting nothing it sent.
    if (res.status !== 200 || body?.status !== 'success' || typeof body.data !== 'object') {
      throw new OutboundRefused(key, `${urlForDisplay(base)} is not a Prometheus API (HTTP ${res.status})`);
    }
  },
};
