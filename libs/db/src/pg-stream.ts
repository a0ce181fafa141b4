import { createRequire } from 'node:module';

/**
 * pg decides when it loads (lib/stream.js) whether it runs in Cloudflare Workers. Node 20 has no
 * `navigator`, so it probes `typeof Response` and builds one; on Node 20 the first touch of `Response`
 * loads undici, Node's fetch: ~10 MB of RSS and 20-80 ms of start for processes that never fetch
 * (measured, issue #14). Imported first by this lib: it loads that one module of pg with `Response`
 * hidden, so pg picks its Node sockets (what the probe answers on Node anyway) and undici stays unloaded
 * until something calls fetch. With a `navigator.userAgent` (Node 21+), which pg checks first, or a
 * `Response` that cannot be hidden, it does nothing and pg loads as usual.
 */
const response = Object.getOwnPropertyDescriptor(globalThis, 'Response');
const navigatorKnown = typeof (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'string';
if (response?.configurable && !navigatorKnown) {
  Object.defineProperty(globalThis, 'Response', { value: undefined, configurable: true, writable: true });
  try {
    createRequire(__filename)('pg/lib/stream.js');
  } catch {
    // pg's layout changed: it loads its stream module itself, probing as before
  } finally {
    Object.defineProperty(globalThis, 'Response', response);
  }
}
