import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { enforceMinRate } from './min-rate';

/**
 * enforceMinRate (issue #32): a client that takes a long answer slower than the rate loses its
 * connection; one that keeps up, and one the server keeps waiting, do not. The answer is far larger than
 * the kernel's socket buffers (about 4 MB on loopback), so a client that stops reading holds bytes back.
 */
describe('enforceMinRate', () => {
  const TOTAL = 24 << 20;
  const CHUNK = 64 << 10;
  // A window well above the gaps between a fast reader's TCP window updates (bursts of about a MB).
  const RATE = { bytesPerSecond: 256 << 10, windowMs: 1_500 };
  let server: Server;
  let port: number;
  const cut: { taken: number; ms: number }[] = [];
  /** What the next request's answer does before streaming: nothing, or wait (a slow server). */
  let serverDelayMs = 0;

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      enforceMinRate(res, RATE, (taken, ms) => cut.push({ taken, ms }));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(TOTAL) });
      await new Promise((r) => setTimeout(r, serverDelayMs));
      const chunk = Buffer.alloc(CHUNK, 0x61);
      for (let sent = 0; sent < TOTAL && !res.destroyed; sent += CHUNK) {
        if (!res.write(chunk)) await new Promise((r) => (res.once('drain', r), res.once('close', r)));
      }
      if (!res.destroyed) res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    cut.length = 0;
    serverDelayMs = 0;
  });

  /** Reads the answer, `perTick` bytes every 10 ms (Infinity: as fast as it comes), after `stallMs` of not reading. */
  const download = (o: { stallMs?: number; perTick?: number }) =>
    new Promise<{ bytes: number; complete: boolean }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (res: IncomingMessage) => {
        let bytes = 0;
        res.pause();
        const pump = () => {
          let budget = o.perTick ?? Infinity;
          let c: Buffer | null;
          while (budget > 0 && (c = res.read(Math.min(budget, CHUNK)) as Buffer | null)) {
            bytes += c.length;
            budget -= c.length;
          }
        };
        const timer = setTimeout(() => {
          if (o.perTick === undefined) {
            res.on('data', (c: Buffer) => (bytes += c.length));
            res.resume();
          } else setInterval(pump, 10).unref();
        }, o.stallMs ?? 0);
        res.on('close', () => {
          clearTimeout(timer);
          resolve({ bytes, complete: res.complete });
        });
        res.on('error', () => {});
      }).on('error', reject);
    });

  it('cuts a client that stops reading within about a window of bytes waiting, and reports what it took', async () => {
    const r = await download({ stallMs: 6_000 });
    expect(r.complete).toBe(false);
    expect(r.bytes).toBeLessThan(TOTAL);
    expect(cut).toHaveLength(1);
    expect(cut[0].taken).toBeLessThan(RATE.bytesPerSecond * (cut[0].ms / 1000));
    expect(cut[0].ms).toBeGreaterThanOrEqual(RATE.windowMs);
  });

  it('does not cut a client reading well above the rate (4 MB/s against 0.25 MB/s), nor one the server keeps waiting', async () => {
    const reader = await download({ perTick: 40 << 10 });
    expect(reader).toEqual({ bytes: TOTAL, complete: true });
    serverDelayMs = 4_000; // windows with nothing to send
    const waited = await download({});
    expect(waited).toEqual({ bytes: TOTAL, complete: true });
    expect(cut).toEqual([]);
  });
});
