// An open-loop HTTP load generator: `rate` requests a second for `durationMs`, whatever the server's
// speed, on `connections` raw keep-alive sockets (requests built before the clock starts, `variants`
// bodies reused in turn; answers parsed just enough to find their status and end, as loadRaw does).
// A request falls due every 1/rate s; a due request waits for a free connection, and one that has waited
// more than `maxLagMs` is counted as missed instead of sent (the rate is above what the server answers).
// Comparing servers at the same requests/s below saturation keeps a slower server's smaller batches per
// event-loop turn out of the CPU per request. Bounded in time; loopback only.
import net from 'node:net';
import { loopbackUrl, rawRequests, summarize } from './load.mjs';

export async function loadRate({ url, body, headers = {}, rate = 1000, connections = 16, durationMs = 10_000, variants = 1000, maxLagMs = 200 }) {
  const u = loopbackUrl(url);
  const requests = rawRequests(u, body, headers, variants);
  const latencies = [];
  let errors = 0;
  let missed = 0;
  let next = 0;
  let due = 0; // requests fallen due so far
  const waiting = []; // due times (ms since start) of due requests without a free connection
  const idle = [];
  const open = [];
  const started = performance.now();
  const end = started + durationMs;

  const connect = () =>
    new Promise((resolve) => {
      const socket = net.connect({ host: u.hostname, port: Number(u.port) }, () => resolve(conn));
      const conn = { socket, buf: Buffer.alloc(0), sentAt: 0 };
      socket.setNoDelay(true);
      socket.on('data', (chunk) => {
        conn.buf = conn.buf.length ? Buffer.concat([conn.buf, chunk]) : chunk;
        for (;;) {
          const headEnd = conn.buf.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const head = conn.buf.subarray(0, headEnd).toString('latin1');
          const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
          if (conn.buf.length < headEnd + 4 + length) return;
          latencies.push(performance.now() - conn.sentAt);
          if (head.slice(9, 12) !== '200') errors++;
          conn.buf = conn.buf.subarray(headEnd + 4 + length);
          release(conn);
        }
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        const i = open.indexOf(conn);
        if (i >= 0) open.splice(i, 1);
        if (performance.now() < end) errors++;
      });
      open.push(conn);
    });
  const send = (conn) => {
    conn.sentAt = performance.now();
    conn.socket.write(requests[next++ % variants]);
  };
  const release = (conn) => {
    const now = performance.now();
    while (waiting.length && now - waiting[0] > maxLagMs) (waiting.shift(), missed++);
    if (waiting.length && now < end) (waiting.shift(), send(conn));
    else idle.push(conn);
  };
  idle.push(...(await Promise.all(Array.from({ length: connections }, connect))));

  const t0 = performance.now();
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      const target = Math.floor(((Math.min(now, end) - t0) * rate) / 1000);
      for (; due < target; due++) {
        const at = (due * 1000) / rate;
        const conn = idle.pop();
        if (conn) send(conn);
        else waiting.push(t0 + at);
      }
      while (waiting.length && now - waiting[0] > maxLagMs) (waiting.shift(), missed++);
      if (now < end) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  // Let the requests in flight finish (at most a second), then close.
  const drainUntil = performance.now() + 1000;
  while (idle.length < open.length && performance.now() < drainUntil) await new Promise((r) => setTimeout(r, 5));
  missed += waiting.length;
  for (const c of open) c.socket.destroy();
  const result = summarize([{ latencies, errors, seconds: (performance.now() - t0) / 1000 }]);
  return { ...result, missed, due };
}
