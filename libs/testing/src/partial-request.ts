import { createServer, type RequestListener } from 'node:http';
import net, { type AddressInfo } from 'node:net';

/**
 * Sends a request whose headers announce a large body but only the start of it, and answers what came
 * back before the server closed the connection. A server that decides from the headers (no token, a
 * wrong key) answers at once; one that reads the body first would wait for bytes that never come, and
 * the test times out.
 */
export async function sendPartialRequest(
  handler: RequestListener,
  o: { path: string; headers?: Record<string, string>; declaredLength?: number; bodyStart?: string },
): Promise<{ statusLine: string; raw: string; closed: boolean }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    const headers = { Host: 'x', 'Content-Type': 'application/json', 'Content-Length': String(o.declaredLength ?? 900_000), ...o.headers };
    const head = `POST ${o.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`;
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      let got = '';
      s.on('data', (d) => (got += d));
      s.on('close', () => resolve(got));
      s.on('error', reject);
      s.write(head + (o.bodyStart ?? '{"a":'));
    });
    return { statusLine: raw.split('\r\n')[0] ?? '', raw, closed: true };
  } finally {
    server.close();
  }
}
