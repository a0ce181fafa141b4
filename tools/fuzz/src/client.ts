import http from 'node:http';

export interface Outcome {
  status?: number;
  contentType?: string;
  text: string;
  ms: number;
  /** Set when no answer came: `timeout after N ms`, or the socket error. */
  error?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
const MAX_TEXT = 8 * 1024 * 1024;

/**
 * One HTTP request with the path sent verbatim (no URL normalisation: `..`, `%ZZ` and friends reach the
 * app as written) and a deadline. The answer's text is kept up to 8 MiB. A kept-alive socket the server
 * closed just as it was reused (ECONNRESET before any answer) is retried once on a new one, as Node's
 * documentation advises: that race is the client's, not the app's.
 */
export function request(
  port: number,
  o: { method: string; path: string; headers?: Record<string, string>; body?: Buffer; timeoutMs: number },
): Promise<Outcome> {
  const start = performance.now();
  const headers: Record<string, string | number> = { ...o.headers };
  if (o.body !== undefined) headers['content-length'] = o.body.length;
  else if (o.method !== 'GET' && o.method !== 'HEAD') headers['content-length'] = 0;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (r: Omit<Outcome, 'ms'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...r, ms: Math.round(performance.now() - start) });
    };
    let req: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      finish({ text: '', error: `no answer within ${o.timeoutMs} ms` });
      req?.destroy();
    }, o.timeoutMs);
    const attempt = (retried: boolean) => {
      let answered = false;
      try {
        req = http.request({ host: '127.0.0.1', port, method: o.method, path: o.path, headers, agent }, (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            if (size < MAX_TEXT) chunks.push(c);
            size += c.length;
          });
          res.on('end', () => finish({ status: res.statusCode, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8').slice(0, MAX_TEXT) }));
          res.on('error', (e) => finish({ status: res.statusCode, text: '', error: `response: ${e.message}` }));
        });
      } catch (e) {
        // Node refuses to send it (e.g. a character a path may not carry): not the app's doing.
        clearTimeout(timer);
        reject(new Error(`the fuzzer made a request Node cannot send: ${(e as Error).message} (${o.method} ${o.path.slice(0, 200)})`));
        return;
      }
      const r = req;
      r.on('error', (e: NodeJS.ErrnoException) => {
        if (!answered && !retried && !done && r.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return attempt(true);
        finish({ text: '', error: e.code ?? e.message });
      });
      if (o.body !== undefined) r.end(o.body);
      else r.end();
    };
    attempt(false);
  });
}
