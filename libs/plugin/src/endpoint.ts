import { pluginErrors } from '@platform/errors';

/** A plugin's address: `grpc://host:port` (plaintext) or `grpcs://host:port` (TLS). */
export interface PluginEndpoint {
  /** As given (normalised: lower-case scheme and host). */
  url: string;
  tls: boolean;
  /** host:port as gRPC takes it ([v6]:port for an IPv6 address). */
  target: string;
  host: string;
  port: number;
}

const MAX_LENGTH = 512;

/**
 * Parses an endpoint; anything but grpc:// or grpcs:// with a host and a port, and nothing else (no
 * user, path, query or fragment), is an ERROR_INVALID_PLUGIN_ENDPOINT. Private and loopback addresses
 * are allowed: that is where plugins run, and endpoints come only from an authorised publish.
 */
export function parseEndpoint(raw: string): PluginEndpoint {
  if (typeof raw !== 'string' || raw.length === 0) throw pluginErrors.invalidEndpoint('empty');
  if (raw.length > MAX_LENGTH) throw pluginErrors.invalidEndpoint(`longer than ${MAX_LENGTH} characters`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme !== 'grpc' && scheme !== 'grpcs') throw pluginErrors.invalidEndpoint('the scheme must be grpc:// or grpcs://');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw pluginErrors.invalidEndpoint('not a URL');
  }
  if (u.username || u.password) throw pluginErrors.invalidEndpoint('no user or password may be given');
  if ((u.pathname && u.pathname !== '/') || u.search || u.hash) throw pluginErrors.invalidEndpoint('only a host and a port may be given');
  const host = u.hostname.toLowerCase();
  if (!host) throw pluginErrors.invalidEndpoint('no host');
  if (!u.port) throw pluginErrors.invalidEndpoint('no port');
  const port = Number(u.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw pluginErrors.invalidEndpoint('the port must be 1-65535');
  return { url: `${scheme}://${host}:${port}`, tls: scheme === 'grpcs', target: `${host}:${port}`, host: host.replace(/^\[|\]$/g, ''), port };
}
