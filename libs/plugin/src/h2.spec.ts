import { createServer as createH2Server, constants, type Http2Server, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { ApiError } from '@platform/errors';
import { DEFAULT_PLUGIN_CLIENT_CONFIG, PluginClients, grpcTimeout, type PluginClientConfig } from './index';

/**
 * The unary client on node:http2 (h2.ts) against hand-made HTTP/2 servers that misbehave in every way
 * a plugin can: slow, cancelled, oversized, gone mid-call, GOAWAY, garbage, not gRPC at all,
 * trailers-only errors. Every outcome is an envelope; the next call after a connection failure works.
 */
const PATH = '/spaceone.api.cost_analysis.plugin.DataSource/init';
const failure = (p: Promise<unknown>): Promise<ApiError> => p.then(() => { throw new Error('expected a failure'); }, (e: ApiError) => e);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits (at most 5 s: the machine may be loaded) until `f` gives something defined. */
async function eventually<T>(f: () => T | undefined): Promise<T | undefined> {
  for (let i = 0; i < 100 && f() === undefined; i++) await sleep(50);
  return f();
}
const frame = (message: Buffer) => Buffer.concat([Buffer.from([0, ...[24, 16, 8, 0].map((s) => (message.length >>> s) & 0xff)]), message]);
/** A PluginInfo {metadata: {ok: true}}: Struct field 1 → entry ("ok" → Value.bool_value true). */
const OK_INFO = Buffer.from([0x0a, 0x0a, 0x0a, 0x08, 0x0a, 0x02, 0x6f, 0x6b, 0x12, 0x02, 0x20, 0x01]);

/** Answers with a message and grpc-status 0 in the trailers, as a gRPC server does. */
function answer(stream: ServerHttp2Stream, message = OK_INFO) {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frame(message));
}

describe('unary calls on node:http2', () => {
  const closers: (() => void)[] = [];
  const clientsList: PluginClients[] = [];
  afterAll(() => {
    for (const c of clientsList) c.close();
    for (const close of closers) close();
  });
  const clients = (o: Partial<PluginClientConfig> = {}) => {
    const c = new PluginClients({ ...DEFAULT_PLUGIN_CLIENT_CONFIG, retryBaseMs: 10, retryMaxMs: 20, ...o });
    clientsList.push(c);
    return c;
  };
  /** An HTTP/2 server whose every stream goes to `onStream` (after the request's body is read). */
  async function h2Server(onStream: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void) {
    const server: Http2Server = createH2Server();
    let sessions = 0;
    server.on('session', () => sessions++);
    const sockets: Socket[] = [];
    server.on('connection', (socket: Socket) => sockets.push(socket));
    server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', () => {});
      stream.on('end', () => onStream(stream, headers, Buffer.concat(chunks)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const port = (server.address() as { port: number }).port;
    /** Cuts every connection, as a crash of the plugin would. */
    const crash = () => sockets.splice(0).forEach((socket) => socket.destroy());
    return { endpoint: `grpc://127.0.0.1:${port}`, server, sessions: () => sessions, crash };
  }

  it('sends the gRPC wire format and decodes the answer; one session for many calls', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const bodies: Buffer[] = [];
    const s = await h2Server((stream, headers, body) => {
      seen.push(headers);
      bodies.push(body);
      answer(stream);
    });
    const c = clients().cost(s.endpoint);
    for (let i = 0; i < 3; i++) await expect(c.dataSource.init({ options: { n: i } }, { timeoutMs: 5000 })).resolves.toEqual({ metadata: { ok: true } });
    expect(s.sessions()).toBe(1);
    expect(seen[0]).toMatchObject({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc', te: 'trailers' });
    expect(seen[0]['grpc-timeout']).toMatch(/^\d{1,8}m$/);
    expect(Number(String(seen[0]['grpc-timeout']).slice(0, -1))).toBeLessThanOrEqual(5000);
    expect(bodies[0][0]).toBe(0); // not compressed
    expect(bodies[0].readUInt32BE(1)).toBe(bodies[0].length - 5);
  });

  it('a client is made once per (kind, plugin, endpoint) and reused; an invalid endpoint is refused every time', () => {
    const c = clients();
    expect(c.monitoring('grpc://127.0.0.1:1', 'p1')).toBe(c.monitoring('grpc://127.0.0.1:1', 'p1'));
    expect(c.monitoring('grpc://127.0.0.1:1', 'p2')).not.toBe(c.monitoring('grpc://127.0.0.1:1', 'p1'));
    for (let i = 0; i < 2; i++) expect(() => c.monitoring('http://127.0.0.1:1', 'p1')).toThrow(expect.objectContaining({ code: 'ERROR_INVALID_PLUGIN_ENDPOINT' }));
    expect(c.openChannels).toBe(0); // nothing connects before a call
  });

  it('the deadline ends the call with 503 and resets the stream (CANCEL)', async () => {
    let reset: number | undefined;
    const s = await h2Server((stream) => stream.on('close', () => (reset = stream.rstCode)));
    const started = Date.now();
    const e = await failure(clients().cost(s.endpoint).dataSource.init({}, { timeoutMs: 200 }));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(e.message).toContain('did not answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await eventually(() => reset)).toBe(constants.NGHTTP2_CANCEL);
  });

  it("the caller's abort rejects with its reason and resets the stream (CANCEL)", async () => {
    let reset: number | undefined;
    const s = await h2Server((stream) => stream.on('close', () => (reset = stream.rstCode)));
    const ac = new AbortController();
    const p = clients().cost(s.endpoint).dataSource.init({}, { signal: ac.signal });
    await sleep(100);
    ac.abort(new Error('job canceled'));
    await expect(p).rejects.toThrow('job canceled');
    expect(await eventually(() => reset)).toBe(constants.NGHTTP2_CANCEL);
  });

  it('an answer announced larger than the receive bound is a 502 before it is read; the session still works', async () => {
    let n = 0;
    const s = await h2Server((stream) => {
      if (n++ > 0) return answer(stream);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write(Buffer.from([0, 0x10, 0, 0, 0])); // 256 MiB announced, never sent
    });
    const c = clients({ maxReceiveBytes: 64 * 1024 });
    const e = await failure(c.cost(s.endpoint).dataSource.init({}));
    expect([e.status, e.code]).toEqual([502, 'ERROR_PLUGIN_RESPONSE_TOO_LARGE']);
    await expect(c.cost(s.endpoint).dataSource.init({})).resolves.toEqual({ metadata: { ok: true } });
    expect(s.sessions()).toBe(1);
  });

  it('a server gone mid-call: 503 after the bounded retries, each on a new connection; then calls work again', async () => {
    let calls = 0;
    let healthy = false;
    const s: Awaited<ReturnType<typeof h2Server>> = await h2Server((stream) => {
      calls++;
      if (healthy) return answer(stream);
      s.crash(); // the plugin crashed with the call in flight
    });
    const c = clients({ retryAttempts: 3 }).cost(s.endpoint);
    const e = await failure(c.dataSource.init({}));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(e.details).toMatchObject({ retryable: true });
    expect(calls).toBe(3);
    expect(s.sessions()).toBe(3);
    healthy = true;
    await expect(c.dataSource.init({})).resolves.toEqual({ metadata: { ok: true } });
  });

  it('a GOAWAY: calls the plugin refused fail UNAVAILABLE (and are retried), the next call opens a new session', async () => {
    let n = 0;
    const s = await h2Server((stream) => {
      n++;
      if (n === 2) {
        // the plugin stops taking calls on this connection, answering none of those in flight
        stream.session?.goaway(constants.NGHTTP2_NO_ERROR, 0);
        setTimeout(() => stream.session?.destroy(), 20);
        return;
      }
      answer(stream);
    });
    const retrying = clients({ retryAttempts: 2 }).cost(s.endpoint);
    await retrying.dataSource.init({});
    await expect(retrying.dataSource.init({})).resolves.toEqual({ metadata: { ok: true } }); // refused, retried on a new session
    expect(s.sessions()).toBe(2);

    const single = clients({ retryAttempts: 1 }).cost(s.endpoint);
    n = 1; // the next call is refused again
    const e = await failure(single.dataSource.init({}));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    await expect(single.dataSource.init({})).resolves.toEqual({ metadata: { ok: true } });
  });

  it('garbage instead of HTTP/2 frames is a 503, never a crash', async () => {
    const server: NetServer = createNetServer((socket) => {
      socket.on('error', () => {});
      socket.end(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n\x00\x00\x12\x04garbage-garbage-garbage'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const e = await failure(clients({ retryAttempts: 2 }).cost(`grpc://127.0.0.1:${(server.address() as { port: number }).port}`).dataSource.init({}, { timeoutMs: 3000 }));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
  });

  it('an HTTP/2 server that is not gRPC: its 404 is UNIMPLEMENTED (400), as gRPC maps it', async () => {
    const s = await h2Server((stream) => {
      stream.respond({ ':status': 404, 'content-type': 'text/html' });
      stream.end('<html>nope</html>');
    });
    const c = clients({ retryAttempts: 1 }).cost(s.endpoint);
    const notFound = await failure(c.dataSource.init({}));
    expect([notFound.status, notFound.code]).toEqual([400, 'ERROR_PLUGIN_UNIMPLEMENTED']);
    expect(notFound.message).toContain('HTTP 404');
  });

  it('200 with the wrong content-type, a 503, and an answer without grpc-status are envelopes too', async () => {
    let mode = '';
    const s = await h2Server((stream) => {
      if (mode === 'text') {
        stream.respond({ ':status': 200, 'content-type': 'text/plain' });
        stream.end('hello');
      } else if (mode === '503') {
        stream.respond({ ':status': 503 });
        stream.end();
      } else {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
        stream.end(frame(OK_INFO)); // no trailers
      }
    });
    const c = clients({ retryAttempts: 1 }).cost(s.endpoint);
    mode = 'text';
    const text = await failure(c.dataSource.init({}));
    expect([text.status, text.message]).toEqual([502, expect.stringContaining('content-type application/grpc')]);
    mode = '503';
    expect(await failure(c.dataSource.init({}))).toMatchObject({ status: 503, code: 'ERROR_PLUGIN_UNAVAILABLE' });
    mode = 'no-trailers';
    const missing = await failure(c.dataSource.init({}));
    expect([missing.status, missing.message]).toEqual([502, expect.stringContaining('without a grpc-status')]);
  });

  it('a trailers-only error: its status and percent-decoded message, the secrets of the request redacted', async () => {
    const secret = 'AKIA-very-secret/9';
    const s = await h2Server((stream) => {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': encodeURIComponent(`ERROR_NOT_FOUND: no bucket for key ${secret} (100%)`) },
        { endStream: true },
      );
    });
    const e = await failure(clients().cost(s.endpoint).dataSource.verify({ secret_data: { aws_secret_access_key: secret } }));
    expect([e.status, e.code]).toEqual([404, 'ERROR_NOT_FOUND']);
    expect(e.message).toContain('no bucket for key *** (100%)');
    expect(JSON.stringify(e)).not.toContain(secret);
  });

  it('a malformed grpc-message is kept as sent; an invalid grpc-status is a 502', async () => {
    let status = '3';
    const s = await h2Server((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': status, 'grpc-message': 'bad %zz escape' }, { endStream: true });
    });
    const c = clients().cost(s.endpoint);
    expect((await failure(c.dataSource.init({}))).message).toContain('bad %zz escape');
    status = '99';
    expect(await failure(c.dataSource.init({}))).toMatchObject({ status: 502 });
  });

  it('two messages, a compressed message or a truncated one for a unary call are 502s', async () => {
    let mode = '';
    const s = await h2Server((stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      if (mode === 'two') stream.end(Buffer.concat([frame(OK_INFO), frame(OK_INFO)]));
      else if (mode === 'compressed') stream.end(Buffer.concat([Buffer.from([1]), frame(OK_INFO).subarray(1)]));
      else stream.end(frame(OK_INFO).subarray(0, 8));
    });
    const c = clients().cost(s.endpoint);
    for (const m of ['two', 'compressed', 'truncated']) {
      mode = m;
      const e = await failure(c.dataSource.init({}));
      expect([m, e.status]).toEqual([m, 502]);
    }
  });

  it('grpc-timeout is at most 8 digits, in the finest unit that fits', () => {
    expect(grpcTimeout(0)).toBe('1m');
    expect(grpcTimeout(1500.2)).toBe('1501m');
    expect(grpcTimeout(99_999_999)).toBe('99999999m');
    expect(grpcTimeout(100_000_000)).toBe('100000S');
    expect(grpcTimeout(1e15)).toBe('99999999H');
  });
});
