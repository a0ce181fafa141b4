import { status as Status } from '@grpc/grpc-js';
import { Writer } from 'protobufjs';
import { PluginClients, type CostAnalysis } from '@platform/plugin';
import type { ApiError } from '@platform/errors';
import { fail, serveCostDataSource, type PluginServer } from './index';
import { aborted, clientConfig, freePort, rawServer, sleep } from './test-support';

/**
 * A plugin that is down, slow, dead mid-stream or hostile (oversized, garbage, endless) never takes
 * the caller down, never hangs it, and always ends as an envelope: 503 ERROR_PLUGIN_UNAVAILABLE
 * (retryable), 502 for a broken answer, 4xx for a refusal.
 */
const failure = (p: Promise<unknown>): Promise<ApiError> => p.then(() => { throw new Error('expected a failure'); }, (e: ApiError) => e);
const drain = async (it: AsyncIterable<unknown>) => {
  let n = 0;
  for await (const _ of it) n++;
  return n;
};
const page = (n: number): CostAnalysis.CostsInfoInput => ({ results: Array.from({ length: n }, (_, i) => ({ cost: i, provider: 'aws', billed_date: '2024-01-01' })) });

describe('plugin failures', () => {
  const servers: PluginServer[] = [];
  const clientsList: PluginClients[] = [];
  const clients = (o: Parameters<typeof clientConfig>[0] = {}) => {
    const c = new PluginClients(clientConfig({ retryBaseMs: 20, retryMaxMs: 50, reconnectMaxMs: 200, ...o }));
    clientsList.push(c);
    return c;
  };
  const serve = async (h: Partial<Parameters<typeof serveCostDataSource>[0]>, port?: number) => {
    const s = await serveCostDataSource({ init: () => ({}), getTasks: () => ({}), getData: function* () {}, ...h }, { port });
    servers.push(s);
    return s;
  };
  afterAll(async () => {
    for (const c of clientsList) c.close();
    for (const s of servers) s.kill();
  });

  it('a slow plugin: the deadline ends the call with 503 ERROR_PLUGIN_UNAVAILABLE, not retried', async () => {
    let calls = 0;
    const s = await serve({ init: async (_r, ctx) => { calls++; await Promise.race([sleep(5000), aborted(ctx.signal)]); return {}; } });
    const c = clients();
    await c.version(s.endpoint); // connected: the deadline is the plugin's time alone
    const started = Date.now();
    const e = await failure(c.cost(s.endpoint).dataSource.init({}, { timeoutMs: 200 }));
    expect(Date.now() - started).toBeLessThan(2000);
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(e.message).toContain('did not answer within 200 ms');
    expect(e.details).toMatchObject({ retryable: true, retryAfterSeconds: 5 });
    expect(calls).toBeLessThanOrEqual(1); // never a second attempt (on a loaded machine the deadline may pass before the first runs)
  });

  it('an answer larger than the receive bound is a 502, and the channel still works', async () => {
    const s = await serve({ init: (r) => ({ metadata: { blob: 'x'.repeat(Number(r.options.size)) } }) });
    const c = clients({ maxReceiveBytes: 64 * 1024 }).cost(s.endpoint);
    const e = await failure(c.dataSource.init({ options: { size: 100_000 } }));
    expect([e.status, e.code]).toEqual([502, 'ERROR_PLUGIN_RESPONSE_TOO_LARGE']);
    await expect(c.dataSource.init({ options: { size: 10 } })).resolves.toEqual({ metadata: { blob: 'x'.repeat(10) } });
  });

  it('a request larger than the send bound is refused (413) before anything is sent', async () => {
    let calls = 0;
    const s = await serve({ init: () => { calls++; return {}; } });
    const e = await failure(clients({ maxSendBytes: 1024 }).cost(s.endpoint).dataSource.init({ options: { big: 'y'.repeat(2048) } }));
    expect([e.status, e.code]).toEqual([413, 'ERROR_PLUGIN_REQUEST_TOO_LARGE']);
    expect(calls).toBe(0);
  });

  it('a value that is not JSON is refused (400) naming the field', async () => {
    const s = await serve({});
    const e = await failure(clients().cost(s.endpoint).dataSource.init({ options: { at: new Date() as never } }));
    expect([e.status, e.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(e.message).toContain('options.at');
  });

  it('garbage, wrong wire types and too-deep answers are 502 ERROR_PLUGIN_INVALID_RESPONSE', async () => {
    const path = '/spaceone.api.cost_analysis.plugin.DataSource/init';
    // field 1 (metadata, a Struct) sent as a varint
    const wrongType = Writer.create().uint32((1 << 3) | 0).uint32(7).finish() as Buffer;
    // a Struct nested 5000 levels: {a: {a: {a: ...}}}, built from the inside out
    let inner = Buffer.alloc(0);
    for (let i = 0; i < 5000; i++) {
      const value = Writer.create().uint32((5 << 3) | 2).bytes(inner).finish(); // Value.struct_value
      const entry = Writer.create().uint32((1 << 3) | 2).string('a').uint32((2 << 3) | 2).bytes(value).finish();
      inner = Buffer.from(Writer.create().uint32((1 << 3) | 2).bytes(entry).finish()); // Struct.fields
    }
    const deep = Writer.create().uint32((1 << 3) | 2).bytes(inner).finish() as Buffer;
    for (const [bytes, expected] of [
      [Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), /PluginInfo/],
      [wrongType, /metadata: wire type 0, expected 2/],
      [deep, /nested deeper than 64 levels/],
      [Buffer.from([0x0a, 0x20, 0x01]), /PluginInfo/], // a length past the end
    ] as const) {
      const raw = await rawServer(path, { unary: () => bytes });
      try {
        const e = await failure(clients().cost(raw.endpoint).dataSource.init({}));
        expect([e.status, e.code]).toEqual([502, 'ERROR_PLUGIN_INVALID_RESPONSE']);
        expect(e.message).toMatch(expected);
      } finally {
        raw.stop();
      }
    }
  });

  it('a stream with a garbage message ends with 502 after the good ones', async () => {
    const good = Writer.create().uint32((1 << 3) | 2).fork().uint32((4 << 3) | 2).string('aws').ldelim().finish() as Buffer;
    const raw = await rawServer('/spaceone.api.cost_analysis.plugin.Cost/get_data', {
      stream: (call) => {
        call.write(good);
        call.write(Buffer.from([0x0a, 0x05, 0x21]));
        call.end();
      },
    });
    const seen: string[] = [];
    try {
      const e = await failure((async () => { for await (const p of clients().cost(raw.endpoint).cost.getData({})) seen.push(p.results[0].provider); })());
      expect([e.status, e.code]).toEqual([502, 'ERROR_PLUGIN_INVALID_RESPONSE']);
      expect(e.message).toContain('message 2');
      expect(seen).toEqual(['aws']);
    } finally {
      raw.stop();
    }
  });

  it('a stream that never ends: the idle deadline ends it (503) and cancels the plugin', async () => {
    let cancelled = false;
    const s = await serve({
      getData: async function* (_r, ctx) {
        yield page(1);
        await aborted(ctx.signal); // then nothing, until the caller gives up
        cancelled = true;
      },
    });
    const started = Date.now();
    const e = await failure(drain(clients().cost(s.endpoint).cost.getData({}, { idleMs: 300 })));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(e.message).toContain('sent nothing for 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
    await sleep(100);
    expect(cancelled).toBe(true);
  });

  it("the idle deadline counts only while the consumer waits: a slow consumer is not the plugin's fault", async () => {
    const s = await serve({ getData: function* () { for (let i = 0; i < 5; i++) yield page(1); } });
    let n = 0;
    for await (const _ of clients().cost(s.endpoint).cost.getData({}, { idleMs: 200 })) {
      n++;
      await sleep(300);
    }
    expect(n).toBe(5);
  });

  it('a plugin killed mid-stream: 503 at once, retryable, and not retried after messages came', async () => {
    let calls = 0;
    const s: PluginServer = await serve({
      getData: async function* (_r, ctx) {
        calls++;
        for (let i = 0; !ctx.signal.aborted; i++) {
          yield page(10);
          if (i === 2) setTimeout(() => s.kill(), 10);
          await sleep(20);
        }
      },
    });
    let received = 0;
    const e = await failure((async () => { for await (const _ of clients().cost(s.endpoint).cost.getData({})) received++; })());
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(e.details).toMatchObject({ retryable: true });
    expect(received).toBeGreaterThanOrEqual(3);
    expect(calls).toBe(1);
  });

  it('UNAVAILABLE is retried with backoff and succeeds when the plugin recovers', async () => {
    let calls = 0;
    const s = await serve({ getTasks: () => { if (++calls < 3) throw fail.custom(Status.UNAVAILABLE, 'ERROR_BUSY', 'try later'); return { changed: [{ start: '2024-01' }] }; } });
    await expect(clients({ retryAttempts: 3 }).cost(s.endpoint).job.getTasks({})).resolves.toMatchObject({ changed: [{ start: '2024-01' }] });
    expect(calls).toBe(3);
  });

  it('UNAVAILABLE is given up after the configured attempts (503); other failures are never retried', async () => {
    let unavailable = 0;
    let invalid = 0;
    const s = await serve({
      getTasks: () => { unavailable++; throw fail.custom(Status.UNAVAILABLE, 'ERROR_BUSY', 'try later'); },
      init: () => { invalid++; throw fail.invalidParameter('options.x', 'bad'); },
    });
    const c = clients({ retryAttempts: 2 }).cost(s.endpoint);
    const e = await failure(c.job.getTasks({}));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(unavailable).toBe(2);
    expect((await failure(c.dataSource.init({}))).status).toBe(400);
    expect(invalid).toBe(1);
  });

  it('a stream is retried on UNAVAILABLE before its first message: every row comes once', async () => {
    let calls = 0;
    const s = await serve({
      getData: function* () {
        if (++calls === 1) throw fail.custom(Status.UNAVAILABLE, 'ERROR_BUSY', 'warming up');
        yield page(2);
        yield page(3);
      },
    });
    let rows = 0;
    for await (const p of clients().cost(s.endpoint).cost.getData({})) rows += p.results.length;
    expect([rows, calls]).toEqual([5, 2]);
  });

  it('a plugin that is down: 503 after the bounded retries, then calls succeed once it is back on the same port', async () => {
    const port = await freePort();
    const c = clients({ retryAttempts: 3 }).cost(`grpc://127.0.0.1:${port}`);
    const started = Date.now();
    const e = await failure(c.dataSource.init({}));
    expect([e.status, e.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    expect(Date.now() - started).toBeLessThan(5000);
    await serve({ init: () => ({ metadata: { back: true } }) }, port);
    await expect(c.dataSource.init({})).resolves.toEqual({ metadata: { back: true } });
  });

  it('stream bounds the caller sets: more messages or bytes than allowed end it with 502', async () => {
    const s = await serve({ getData: function* () { for (let i = 0; i < 10; i++) yield page(10); } });
    const c = clients().cost(s.endpoint);
    const byCount = await failure(drain(c.cost.getData({}, { maxMessages: 5 })));
    expect([byCount.status, byCount.code]).toEqual([502, 'ERROR_PLUGIN_RESPONSE_TOO_LARGE']);
    expect(byCount.message).toContain('past 5 messages');
    const byBytes = await failure(drain(c.cost.getData({}, { maxBytes: 1000 })));
    expect(byBytes.message).toContain('past 1000 bytes');
    expect(await drain(c.cost.getData({}, { maxMessages: 10 }))).toBe(10);
  });

  it("statuses map to envelopes: NOT_FOUND 404, a plugin's bug 502 ERROR_UNKNOWN, UNIMPLEMENTED 400; never a 500", async () => {
    const s = await serve({
      init: (r) => {
        if (r.options.case === 'missing') throw fail.notFound('bucket', 'b1');
        if (r.options.case === 'bug') throw new TypeError("Cannot read properties of undefined (reading 'x')");
        return {};
      },
    });
    const c = clients().cost(s.endpoint);
    const notFound = await failure(c.dataSource.init({ options: { case: 'missing' } }));
    expect([notFound.status, notFound.code]).toEqual([404, 'ERROR_NOT_FOUND']);
    const bug = await failure(c.dataSource.init({ options: { case: 'bug' } }));
    expect([bug.status, bug.code]).toEqual([502, 'ERROR_UNKNOWN']);
    expect(bug.message).toContain("reading 'x'");
    const unimplemented = await failure(c.cost.getLinkedAccounts({}));
    expect([unimplemented.status, unimplemented.code]).toEqual([400, 'ERROR_PLUGIN_UNIMPLEMENTED']);
  });

  it('an endpoint that is not grpc:// or grpcs:// is refused before any connection', () => {
    const c = clients();
    for (const bad of ['http://127.0.0.1:1', 'grpc://127.0.0.1', 'grpc://u:p@127.0.0.1:1', 'grpc://127.0.0.1:1/x', 'file:///etc/passwd', 'grpc://127.0.0.1:70000', '']) {
      expect(() => c.cost(bad)).toThrow(expect.objectContaining({ status: 400, code: 'ERROR_INVALID_PLUGIN_ENDPOINT' }));
    }
    expect(c.openChannels).toBe(0);
  });

  it('the caller cancels: the call ends with its reason and the plugin sees the cancel', async () => {
    let pluginCancelled = false;
    const s = await serve({ init: async (_r, ctx) => { await aborted(ctx.signal); pluginCancelled = true; return {}; } });
    const ac = new AbortController();
    const p = clients().cost(s.endpoint).dataSource.init({}, { signal: ac.signal });
    await sleep(100);
    ac.abort(new Error('job canceled'));
    await expect(p).rejects.toThrow('job canceled');
    await sleep(100);
    expect(pluginCancelled).toBe(true);
  });
});
