import { MODULES, type ModuleName } from '@platform/core';
import { ApiError } from '@platform/errors';
import { applyOnly, type Query } from '@platform/query';
import { evaluateInMemory } from '@platform/query';

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

export function listEndpoints(config: EndpointConfig, input: { service?: string; endpoint_type?: 'public' | 'internal'; query?: Query }) {
  if (input.endpoint_type && !['public', 'internal'].includes(input.endpoint_type)) {
    throw new ApiError(400, 'ERROR_INVALID_PARAMETER', 'Invalid parameter. (key = endpoint_type, reason = public or internal)');
  }
  const rows = endpoints(config)
    .filter((e) => !input.service || e.service === input.service)
    .map((e) => (input.endpoint_type === 'internal' ? { ...e, endpoint: e.internal_endpoint } : e));
  const { rows: page, total_count } = evaluateInMemory(rows, input.query);
  return { results: page.map((r) => applyOnly(r, input.query?.only)), total_count };
}
