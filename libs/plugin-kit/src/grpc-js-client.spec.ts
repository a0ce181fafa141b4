import { Client, credentials, Metadata, status as Status, type ServiceError } from '@grpc/grpc-js';
import { connect, constants } from 'node:http2';
import { PACKAGES, rpcMethod, type CostAnalysis } from '@platform/plugin';
import { fail, serveCostDataSource, type PluginServer } from './index';
import { aborted, sleep } from './test-support';

/**
 * The kit serves gRPC on node:http2 itself (h2-server.ts): a stock grpc-js client must call it as it
 * calls any gRPC server — unary and server-streaming methods, statuses with percent-encoded details,
 * deadlines, cancels, size bounds and methods the plugin does not serve.
 */
const P = PACKAGES.costAnalysis;
const init = rpcMethod(`${P}.DataSource`, 'init');
const getData = rpcMethod<CostAnalysis.GetDataRequest, unknown, CostAnalysis.CostsInfo, unknown>(`${P}.Cost`, 'get_data');
const identity = (b: Buffer) => b;

describe('the kit server called by a grpc-js client', () => {
  let server: PluginServer;
  let client: Client;
  const seen: { metadata?: Record<string, string>; cancelled?: boolean; deadline?: Date } = {};

  beforeAll(async () => {
    server = await serveCostDataSource(
      {
        init: async (req, ctx) => {
          seen.metadata = ctx.metadata;
          seen.deadline = ctx.deadline;
          const c = String(req.options.case ?? '');
          if (c === 'refuse') throw fail.custom(Status.NOT_FOUND, 'ERROR_NOT_FOUND', 'Cannot find 50% of "café" – sorry');
          if (c === 'bug') throw new TypeError('boom');
          if (c === 'wait') {
            await aborted(ctx.signal);
            seen.cancelled = true;
            throw fail.unknown('gave up');
          }
          return { metadata: { echo: req.options } };
        },
        getTasks: () => ({ tasks: [] }),
        getData: async function* (req) {
          const n = Number(req.task_options.n ?? 3);
          for (let i = 0; i < n; i++) yield { results: [{ cost: i, billed_date: '2024-01-01' }] };
          if (req.task_options.fail) throw fail.invalidArgument('page 3 is broken');
        },
      },
      { maxReceiveBytes: 4096 },
    );
    client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await server.stop(100);
  });

  const unary = (req: unknown, o: { path?: string; metadata?: Metadata; deadlineMs?: number; raw?: Buffer } = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const call = client.makeUnaryRequest(
        o.path ?? init.path,
        identity,
        identity,
        o.raw ?? init.request.encode(req as never),
        o.metadata ?? new Metadata(),
        { deadline: o.deadlineMs ? Date.now() + o.deadlineMs : Infinity },
        (err: ServiceError | null, res?: Buffer) => (err ? reject(err) : resolve(init.response.decode(res!))),
      );
      void call;
    });

  it('answers a unary call and hands the handler the metadata and the deadline', async () => {
    const md = new Metadata();
    md.set('token', 't-1');
    md.set('x_domain_id', 'domain-1');
    await expect(unary({ options: { a: 1, s: 'x' } }, { metadata: md, deadlineMs: 30_000 })).resolves.toEqual({ metadata: { echo: { a: 1, s: 'x' } } });
    expect(seen.metadata).toMatchObject({ token: 't-1', x_domain_id: 'domain-1' });
    expect(seen.metadata!['content-type']).toBeUndefined();
    expect(seen.metadata!['grpc-timeout']).toBeUndefined();
    expect(seen.deadline!.getTime()).toBeGreaterThan(Date.now() + 20_000);
  });

  it('statuses arrive with their details intact (percent-encoded on the wire); a bug is INTERNAL ERROR_UNKNOWN', async () => {
    await expect(unary({ options: { case: 'refuse' } })).rejects.toMatchObject({ code: Status.NOT_FOUND, details: 'ERROR_NOT_FOUND: Cannot find 50% of "café" – sorry' });
    await expect(unary({ options: { case: 'bug' } })).rejects.toMatchObject({ code: Status.INTERNAL, details: 'ERROR_UNKNOWN: boom' });
    await expect(unary(undefined, { raw: Buffer.from([0x0a, 0xff]) })).rejects.toMatchObject({ code: Status.INVALID_ARGUMENT });
  });

  it('a method the plugin does not serve is UNIMPLEMENTED', async () => {
    await expect(unary({}, { path: `/${P}.Cost/get_linked_accounts` })).rejects.toMatchObject({ code: Status.UNIMPLEMENTED });
    await expect(unary({}, { path: '/no.Such/method' })).rejects.toMatchObject({ code: Status.UNIMPLEMENTED });
  });

  it("the caller's deadline ends the call DEADLINE_EXCEEDED and aborts the handler", async () => {
    seen.cancelled = false;
    const started = Date.now();
    await expect(unary({ options: { case: 'wait' } }, { deadlineMs: 150 })).rejects.toMatchObject({ code: Status.DEADLINE_EXCEEDED });
    expect(Date.now() - started).toBeLessThan(3000);
    for (let i = 0; i < 50 && !seen.cancelled; i++) await sleep(20);
    expect(seen.cancelled).toBe(true);
  });

  it('a request past maxReceiveBytes is RESOURCE_EXHAUSTED, and the next call still works', async () => {
    await expect(unary({ options: { big: 'y'.repeat(5000) } })).rejects.toMatchObject({ code: Status.RESOURCE_EXHAUSTED });
    await expect(unary({ options: { ok: true } })).resolves.toEqual({ metadata: { echo: { ok: true } } });
  });

  it('a server stream: every message, then OK; a failure after messages arrives as the final status', async () => {
    const read = (task_options: Record<string, unknown>) =>
      new Promise<{ costs: number[]; err?: ServiceError }>((resolve) => {
        const costs: number[] = [];
        const call = client.makeServerStreamRequest(getData.path, identity, identity, getData.request.encode({ task_options } as never), new Metadata(), {});
        call.on('data', (b: Buffer) => costs.push(...getData.response.decode(b).results.map((r) => r.cost)));
        call.on('error', (err: ServiceError) => resolve({ costs, err }));
        call.on('end', () => resolve({ costs }));
      });
    expect(await read({ n: 4 })).toEqual({ costs: [0, 1, 2, 3] });
    const failed = await read({ n: 2, fail: true });
    expect(failed.costs).toEqual([0, 1]);
    expect(failed.err).toMatchObject({ code: Status.INVALID_ARGUMENT, details: 'ERROR_INVALID_ARGUMENT: page 3 is broken' });
  });

  it('a RST_STREAM from the caller aborts the handler', async () => {
    seen.cancelled = false;
    const session = connect(`http://127.0.0.1:${server.port}`);
    try {
      const body = init.request.encode({ options: { case: 'wait' } } as never);
      const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]);
      const stream = session.request({ ':method': 'POST', ':path': init.path, 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => {});
      stream.end(frame);
      await sleep(100);
      stream.close(constants.NGHTTP2_CANCEL);
      for (let i = 0; i < 50 && !seen.cancelled; i++) await sleep(20);
      expect(seen.cancelled).toBe(true);
    } finally {
      session.destroy();
    }
  });

  it('a request that is not gRPC is refused with HTTP 415', async () => {
    const session = connect(`http://127.0.0.1:${server.port}`);
    try {
      const status = await new Promise<number>((resolve) => {
        const stream = session.request({ ':method': 'POST', ':path': init.path, 'content-type': 'application/json' });
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', () => {});
        stream.end('{}');
      });
      expect(status).toBe(415);
    } finally {
      session.destroy();
    }
  });
});
