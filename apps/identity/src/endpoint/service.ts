import { MODULES, type ModuleName } from '@platform/core';
import { applyOnly, defineResource, listInMemory, resolveOnly, type Query } from '@platform/query';

export interface EndpointInfo {
  service: string;
  name: string;
  endpoint: string;
  state: 'ACTIVE' | 'INACTIVE';
  version: string;
  internal_endpoint: string;
}

export interface EndpointConfig {
  publicBaseUrl: string;
  /** `ENDPOINTS` (JSON) may override any module's entry, e.g. {"monitoring": {"internal": "http://monitoring:8105", "state": "INACTIVE"}}. */
  overrides: Partial<Record<ModuleName, { public?: string; internal?: string; state?: 'ACTIVE' | 'INACTIVE'; version?: string }>>;
  version: string;
}

export function loadEndpointConfig(publicBaseUrl: string, raw = process.env.ENDPOINTS): EndpointConfig {
  let overrides: EndpointConfig['overrides'] = {};
  if (raw) {
    try {
      overrides = JSON.parse(raw);
    } catch {
      throw new Error('ENDPOINTS must be a JSON object keyed by module name');
    }
  }
  return { publicBaseUrl: publicBaseUrl.replace(/\/$/, ''), overrides, version: process.env.PLATFORM_VERSION || '1.0.0' };
}

/** The platform's service endpoints, from configuration. */
export function endpoints(config: EndpointConfig): EndpointInfo[] {
  return (Object.keys(MODULES) as ModuleName[]).map((m) => {
    const o = config.overrides[m] ?? {};
    return {
      service: m,
      name: m,
      endpoint: o.public ?? `${config.publicBaseUrl}/${m}`,
      internal_endpoint: o.internal ?? `http://${process.env[`${m.replace(/-/g, '_').toUpperCase()}_HOST`] || '127.0.0.1'}:${MODULES[m].port}`,
      state: o.state ?? 'ACTIVE',
      version: o.version ?? config.version,
    };
  });
}

const endpointResource = defineResource({
  table: 'endpoint',
  idKey: 'service',
  keywordKeys: ['service', 'name', 'endpoint'],
  fields: Object.fromEntries(
    ['service', 'name', 'endpoint', 'internal_endpoint', 'state', 'version'].map((k) => [k, { column: k, type: 'string' as const }]),
  ),
});

export function listEndpoints(config: EndpointConfig, input: { service?: string; endpoint_type?: string; query?: Query }) {
  const rows = endpoints(config)
    .filter((e) => !input.service || e.service === input.service)
    .map((e) => (input.endpoint_type?.toLowerCase() === 'internal' ? { ...e, endpoint: e.internal_endpoint } : e));
  const { rows: page, total_count } = listInMemory(endpointResource, rows, input.query);
  return { results: page.map((r) => applyOnly(r, resolveOnly(endpointResource, input.query))), total_count };
}
