#!/usr/bin/env node
// The local API gateway: routes /<module>/... to that module's app by the first path segment, with the
// route table of config/modules.json, round robin over the app's replicas. Ports: GATEWAY_PORT (8080); each
// app at <MODULE>_URLS / <MODULE>_URL or 127.0.0.1:<port> (+10 per replica with START_REPLICAS).
import http from 'node:http';
import { readFileSync } from 'node:fs';

const modules = JSON.parse(readFileSync(new URL('../../config/modules.json', import.meta.url), 'utf8'));
const port = Number(process.env.GATEWAY_PORT || 8080);
const host = process.env.GATEWAY_HOST || '127.0.0.1';

/** Replica `i` of an app listens on its port + this × i (`START_REPLICAS`; libs/testing's platform too). */
export const REPLICA_PORT_STRIDE = 10;

/**
 * Where each module's requests go: `<MODULE>_URLS` (comma-separated replicas), `<MODULE>_URL` (one), or
 * by default `START_REPLICAS` (1) replicas on this machine at the module's port + REPLICA_PORT_STRIDE × i.
 */
export function routeTable(env = process.env) {
  const replicas = Math.max(1, Number(env.START_REPLICAS || 1));
  return Object.fromEntries(
    Object.entries(modules).map(([name, m]) => {
      const key = name.replace(/-/g, '_').toUpperCase();
      const urls = env[`${key}_URLS`]?.split(',').filter(Boolean) ?? (env[`${key}_URL`] ? [env[`${key}_URL`]] : undefined);
      const list = urls ?? [...Array(replicas).keys()].map((i) => `http://127.0.0.1:${m.port + REPLICA_PORT_STRIDE * i}`);
      return [name, list.map((u) => new URL(u))];
    }),
  );
}

const routes = routeTable();
/** The app that serves the platform's API reference at /docs (every app can: libs/http docs.ts). */
export const DOCS_MODULE = 'identity';
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const turns = new Map();

function envelope(res, status, code, message) {
  if (res.headersSent) return res.destroy();
  const body = JSON.stringify({ error: { code, message, status } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const path = req.url || '/';
  if (path === '/healthz') return res.end(JSON.stringify({ status: 'ok', service: 'gateway' }));
  const segment = path.split('/')[1]?.split('?')[0];
  // /docs, the platform's API reference, is served by the docs module's app (as the nginx gateway does).
  const module = segment === 'docs' && path.split('?')[0] === '/docs' ? DOCS_MODULE : segment;
  const targets = module && Object.hasOwn(routes, module) ? routes[module] : undefined;
  if (!targets) return envelope(res, 404, 'ERROR_NOT_FOUND', `No module serves ${path.split('?')[0]}.`);
  // Round robin over the module's replicas, as nginx does.
  const n = (turns.get(module) ?? 0) + 1;
  turns.set(module, n);
  const target = targets[n % targets.length];
  const headers = { ...req.headers, 'x-forwarded-for': req.socket.remoteAddress, 'x-forwarded-host': req.headers.host };
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path, headers, agent },
    (up) => {
      res.writeHead(up.statusCode || 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', () => envelope(res, 503, 'ERROR_SERVICE_UNAVAILABLE', `Module ${module} is unavailable.`));
  req.pipe(upstream);
});

if (import.meta.url === `file://${process.argv[1]}`) {
  server.listen(port, host, () =>
    console.log(JSON.stringify({ msg: 'gateway listening', port, routes: Object.fromEntries(Object.entries(routes).map(([k, v]) => [k, v.map((u) => u.origin)])) })),
  );
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
