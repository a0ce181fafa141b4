// A closed-loop HTTP load generator: `concurrency` keep-alive connections, each sending the next
// request as soon as the previous answer arrives, for `durationMs`. Bounded in time; loopback only.
import http from 'node:http';

export async function load({ url, body, headers = {}, concurrency = 32, durationMs = 10_000 }) {
  const u = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) throw new Error('benchmarks only target this machine');
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
