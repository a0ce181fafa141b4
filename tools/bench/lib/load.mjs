// A closed-loop HTTP load generator: `concurrency` keep-alive connections, each sending the next
// request as soon as the previous answer arrives, for `durationMs`. Bounded in time; loopback only.
import http from 'node:http';
import net from 'node:net';

/** The target as a URL, refused unless it is this machine. */
export function loopbackUrl(url) {
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) throw new Error('benchmarks only target this machine');
  return u;
}

export async function load({ url, body, headers = {}, concurrency = 32, durationMs = 10_000 }) {
  const u = loopbackUrl(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  let errors = 0;
  let i = 0;
  const end = Date.now() + durationMs;
  const one = () =>
    new Promise((resolve) => {
      const payload = Buffer.from(JSON.stringify(body(i++)));
      const start = process.hrtime.bigint();
      const req = http.request(
        { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers } },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
            if (res.statusCode !== 200) errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(payload);
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) await one();
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  agent.destroy();
  return summarize([{ latencies, errors, seconds }]);
}

/**
 * One result from several runs of `load` against the same server (the slices of an interleaved
 * comparison): requests and seconds add up, percentiles come from all the latencies together.
 */
export function summarize(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const errors = runs.reduce((n, r) => n + r.errors, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { requests: latencies.length, errors, seconds, latencies, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99) };
}

/**
 * The same closed loop as `load`, on raw keep-alive sockets with requests built before the clock starts
 * (`variants` bodies, reused in turn): a load generator that spends little CPU, for benchmarks whose
 * figure is an absolute rate on the machine the server shares with it. Answers are parsed just enough
 * to find their status and end (Content-Length; a closed connection is reopened).
 */
export async function loadRaw({ url, body, headers = {}, concurrency = 32, durationMs = 10_000, variants = 1000 }) {
  const u = loopbackUrl(url);
  const requests = rawRequests(u, body, headers, variants);
  const latencies = [];
  let errors = 0;
  let next = 0;
  const started = Date.now();
  const end = started + durationMs;
  const worker = () =>
    new Promise((resolve) => {
      let socket;
      let buf = Buffer.alloc(0);
      let sentAt = 0n;
      const send = () => {
        if (Date.now() >= end) return socket.end(), resolve();
        sentAt = process.hrtime.bigint();
        socket.write(requests[next++ % variants]);
      };
      const open = () => {
        buf = Buffer.alloc(0);
        socket = net.connect({ host: u.hostname, port: Number(u.port) }, send);
        socket.on('data', (chunk) => {
          buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
          for (;;) {
            const headEnd = buf.indexOf('\r\n\r\n');
            if (headEnd < 0) return;
            const head = buf.subarray(0, headEnd).toString('latin1');
            const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
            if (buf.length < headEnd + 4 + length) return;
            latencies.push(Number(process.hrtime.bigint() - sentAt) / 1e6);
            if (head.slice(9, 12) !== '200') errors++;
            buf = buf.subarray(headEnd + 4 + length);
            send();
          }
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          if (Date.now() < end) {
            errors++;
            open();
          } else resolve();
        });
      };
      open();
    });
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize([{ latencies, errors, seconds: (Date.now() - started) / 1000 }]);
}

/** `variants` keep-alive POSTs of `body(i)` to `u`, as raw bytes built before the clock starts (loadRaw, loadRate). */
export function rawRequests(u, body, headers, variants) {
  return Array.from({ length: variants }, (_, i) => {
    const payload = Buffer.from(JSON.stringify(body(i)));
    const head = [`POST ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, 'Connection: keep-alive', 'Content-Type: application/json', `Content-Length: ${payload.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), payload]);
  });
}
