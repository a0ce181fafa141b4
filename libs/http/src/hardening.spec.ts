import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '@platform/core';
import { ApiError } from '@platform/errors';
import { bearer, sendPartialRequest, testVerifier } from '@platform/testing';
import { createHttpServer, createServiceApp, operation, request as requestSchema, struct, Empty } from './index';

const access = { permission: 'demo:Thing.write', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };

function capture() {
  const lines: string[] = [];
  const sink = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
  return { logger: createLogger('hard', 'info', sink), text: () => lines.join('') };
}

function makeApp(logger = createLogger('hard', 'silent')) {
  let handled = 0;
  const app = createServiceApp({
    service: 'hard',
    logger,
    verifier: testVerifier,
    secretPaths: ['/hard/v1/hook/*/:secret', '/hard/v1/download/:secret'],
    operations: [
      operation({
        path: '/hard/v1/thing/create',
        access,
        schema: requestSchema({ tags: struct.optional(), query: z.unknown().optional() }),
        response: z.strictObject({ tags: z.record(z.string(), z.unknown()) }), handler: (input) => (handled++, { tags: input.tags ?? {} }),
      }),
      operation({
        path: '/hard/v1/thing/busy',
        access: 'public',
        schema: requestSchema({}),
        response: Empty, errors: { 429: ['ERROR_TOO_MANY_REQUESTS'] }, handler: () => {
          throw new ApiError(429, 'ERROR_TOO_MANY_REQUESTS', 'Slow down.', { retryAfterSeconds: 7.2 });
        },
      }),
    ],
    routes: (a, { wrap }) => {
      a.post('/hard/v1/hook/:id/:key/events', wrap('hook', async (_req, res) => void res.json({})));
    },
  });
  return { app, handled: () => handled };
}

describe('request bodies within bounds', () => {
  it('refuses a prototype key at any depth with a 400 naming it, and pollutes nothing', async () => {
    const { app, handled } = makeApp();
    const auth = await bearer();
    for (const [body, key] of [
      ['{"query":{"filter":[{"k":"tags","o":"match","v":{"__proto__.x":1}}]}}', 'query.filter[0].v.__proto__.x'],
      ['{"tags":{"__proto__":{"polluted":1}}}', 'tags.__proto__'],
      ['{"tags":{"a":{"constructor":{"prototype":{"polluted":1}}}}}', 'tags.a.constructor'],
      ['{"__proto__":{"domain_id":"evil"}}', '__proto__'],
    ] as const) {
      const res = await request(app).post('/hard/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('ERROR_INVALID_PARAMETER');
      expect(res.body.error.message).toContain(`key = ${key}`);
    }
    expect(handled()).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).domain_id).toBeUndefined();
  });

  it('answers a 50,000-deep value with a 400, not a 500', async () => {
    const { app } = makeApp();
    const body = '{"query":{"filter":[{"k":"a","o":"eq","v":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}]}}';
    const res = await request(app).post('/hard/v1/thing/create').set('Authorization', await bearer()).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/key = query\.filter\[0\]\.v\[0\].*nested deeper than 32 levels/);
  });
});

describe('what the fuzzer found', () => {
  it('refuses NUL characters anywhere in a body, malformed %-escapes in a path, and values PostgreSQL cannot store, with 400s', async () => {
    const { app } = makeApp();
    const auth = await bearer();
    const nul = await request(app).post('/hard/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send('{"tags":{"a":"x\\u0000y"}}');
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toContain('key = tags.a');
    const nulKey = await request(app).post('/hard/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send('{"tags":{"a\\u0000":1}}');
    expect(nulKey.status).toBe(400);
    // a lone UTF-16 surrogate: PostgreSQL (and Prisma's engine) cannot take it; the fuzzer found a 500
    for (const body of ['{"tags":{"a":"x\\ud800y"}}', '{"tags":{"a":"\\udc00"}}', '{"tags":{"\\udbff":1}}', '{"name":["ok","\\ud83d"]}']) {
      const lone = await request(app).post('/hard/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send(body);
      expect([body, lone.status, lone.body.error.code]).toEqual([body, 400, 'ERROR_INVALID_PARAMETER']);
    }
    const pair = await request(app).post('/hard/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send('{"tags":{"a":"\\ud83d\\ude00"}}');
    expect(pair.status).not.toBe(400);
    const escape = await request(app).post('/hard/v1/hook/%ZZ/key/events').send({});
    expect(escape.status).toBe(400);
    expect(escape.body.error.status).toBe(400);
    const stored = createServiceApp({
      service: 'hard',
      logger: createLogger('hard', 'silent'),
      operations: [
        operation({
          path: '/hard/v1/nul/get',
          access: 'public',
          schema: requestSchema({}),
          response: Empty, handler: () => {
            throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021', severity: 'ERROR' });
          },
        }),
      ],
    });
    const pg = await request(stored).post('/hard/v1/nul/get').send({});
    expect(pg.status).toBe(400);
    expect(JSON.stringify(pg.body)).not.toContain('0x00');
  });
});

describe('token before body', () => {
  it('refuses a request without a token before reading its body, and closes the connection', async () => {
    const { app } = makeApp();
    // Headers announce 900 KB, then only a few bytes come: the answer must not wait for the rest.
    const res = await sendPartialRequest(app, { path: '/hard/v1/thing/create', bodyStart: '{"tags":' });
    expect(res.statusLine).toMatch(/^HTTP\/1.1 401/);
    expect(res.raw).toMatch(/connection: close/i);
    expect(res.raw).toContain('ERROR_AUTHENTICATE_FAILURE');
  });
});

describe('lingering close', () => {
  it('a client still sending a refused body reads the answer, not a broken connection', async () => {
    const { app } = makeApp();
    const server = createHttpServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const body = Buffer.alloc(1_100_000, 'a');
    const send = (headers: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/hard/v1/thing/create', headers: { 'content-length': String(body.length), ...headers } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(`${res.statusCode} ${res.headers.connection} ${text}`));
        });
        req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
        req.end(body);
      });
    // Deterministic: the rest of the body is sent only once the whole answer has arrived. A connection
    // closed at once resets (ECONNRESET / EPIPE) on those writes; a lingering one takes them.
    const token = await bearer();
    const sendAfterAnswer = () =>
      new Promise<string>((resolve) => {
        // Half-open, as a client streaming its body is: it goes on writing after the server's FIN.
        const s = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        let got = '';
        let sent = false;
        s.on('data', (d) => {
          got += d;
          if (!sent && got.includes('ERROR_UNSUPPORTED_MEDIA_TYPE')) {
            sent = true;
            let left = 40;
            const more = (): unknown => (left-- > 0 && s.writable ? s.write(Buffer.alloc(16_384, 'a'), () => setTimeout(more, 5)) : s.end());
            more();
          }
        });
        let failed = '';
        s.on('error', (e) => (failed = ` then ${(e as NodeJS.ErrnoException).code}`));
        s.on('close', () => resolve(`${got.split('\r\n')[0]}${failed}${sent ? '' : ' (body not sent)'}`));
        s.write(`POST /hard/v1/thing/create HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json; charset=latin1\r\nContent-Length: ${body.length}\r\n\r\n{"a":`);
      });
    try {
      expect(await sendAfterAnswer()).toBe('HTTP/1.1 415 Unsupported Media Type');
      for (let i = 0; i < 10; i++) {
        // 415 before the body is read; 413 past the limit; 401 without a token: each one answered.
        expect(await send({ 'content-type': 'application/json; charset=latin1', authorization: await bearer() })).toMatch(/^415 close .*ERROR_UNSUPPORTED_MEDIA_TYPE/);
        expect(await send({ 'content-type': 'application/json', authorization: await bearer() })).toMatch(/^413 close /);
        expect(await send({ 'content-type': 'application/json' })).toMatch(/^401 close .*ERROR_AUTHENTICATE_FAILURE/);
      }
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('response hooks', () => {
  it('a throw inside the request log or metrics hook never becomes an uncaught exception', async () => {
    // The request line goes to the logger's destination (requestLineWriter): make writing a `request` line throw.
    let thrown = 0;
    const logger = createLogger('hard', 'info', {
      write(line: string) {
        if (line.includes('"msg":"request"')) {
          thrown++;
          throw new Error('hook exploded');
        }
      },
    });
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const { app } = makeApp(logger);
      const res = await request(app).post('/hard/v1/thing/create').set('Authorization', await bearer()).send({});
      expect(res.status).toBe(200);
      const again = await request(app).post('/hard/v1/thing/create').set('Authorization', await bearer()).send({});
      expect(again.status).toBe(200);
      const other = await request(app).get('/hard/v1/nothing');
      expect(other.status).toBe(404);
      await new Promise((r) => setTimeout(r, 20));
      expect(thrown).toBe(3);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});

describe('the request line', () => {
  it('is one line per request, operation or not, with its id, caller, method, path, status and duration', async () => {
    const { logger, text } = capture();
    const { app } = makeApp(logger);
    await request(app).post('/hard/v1/thing/create?x=1').set('Authorization', await bearer()).set('x-request-id', 'rid-op').send({ tags: { password: 'hunter2' } });
    await request(app).post('/hard/v1/thing/create').set('x-request-id', 'rid-401').send({});
    await request(app).get('/hard/v1/thing/create').set('x-request-id', 'rid-405');
    await new Promise((r) => setTimeout(r, 20));
    const lines = text().split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual({
      level: 'info', time: expect.any(String), service: 'hard', name: 'hard', msg: 'request',
      req_id: 'rid-op', domain_id: 'domain-test', user_id: expect.any(String), method: 'POST', path: '/hard/v1/thing/create', status: 200, duration_ms: expect.any(Number),
    });
    expect(lines[1]).toMatchObject({ req_id: 'rid-401', method: 'POST', path: '/hard/v1/thing/create', status: 401 });
    expect(lines[1]).not.toHaveProperty('user_id');
    expect(lines[2]).toMatchObject({ req_id: 'rid-405', method: 'GET', path: '/hard/v1/thing/create', status: 405 });
    expect(text()).not.toContain('hunter2');
  });
});

describe('secrets in logged paths', () => {
  it('every logged path goes through the app\'s secret templates, on every route and on 404 and 405', async () => {
    const { logger, text } = capture();
    const { app } = makeApp(logger);
    const key = 'KEY-s3cr3t-0123456789';
    await request(app).post(`/hard/v1/hook/wh-1/${key}/events`).send({});
    await request(app).get(`/hard/v1/hook/wh-1/${key}/events`);
    await request(app).post(`/hard/v1/hook/wh-1/${key}/other/path`).send({});
    await request(app).post(`/HARD//v1/hook/wh-1/${key}/events`).send({});
    await request(app).post(`/hard/v1/%68ook/wh-1/${key}/events`).send({});
    await request(app).get(`/hard/v1/download/${key}`);
    await new Promise((r) => setTimeout(r, 20));
    const log = text();
    expect(log).toContain('/hard/v1/hook/wh-1/***/events');
    expect(log).toContain('/hard/v1/download/***');
    expect(log).not.toContain(key);
  });
});

describe('secret paths from the route table', () => {
  it('a module\'s secretPaths in config/modules.json hide its secrets without the app naming them', async () => {
    const { logger, text } = capture();
    const app = createServiceApp({
      service: 'monitoring',
      logger,
      operations: [],
      routes: (a, { wrap }) => a.post('/monitoring/v1/webhook/:id/:key/events', wrap('hook', async (_req, res) => void res.json({}))),
    });
    await request(app).post('/monitoring/v1/webhook/webhook-1/the-access-key-123/events').send({});
    await request(app).put('/monitoring/v1/webhook/webhook-1/the-access-key-123/events').send({});
    await new Promise((r) => setTimeout(r, 20));
    expect(text()).toContain('/monitoring/v1/webhook/webhook-1/***/events');
    expect(text()).not.toContain('the-access-key-123');
  });
});

describe('Retry-After', () => {
  it('is set from an error that says when to retry', async () => {
    const { app } = makeApp();
    const res = await request(app).post('/hard/v1/thing/busy').send({});
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('8');
    expect(res.body.error.code).toBe('ERROR_TOO_MANY_REQUESTS');
  });
});

describe('server time limits', () => {
  it('holds at most HTTP_MAX_CONNECTIONS connections: one more is closed at once, and the held ones still work', async () => {
    const { app } = makeApp();
    const server = createHttpServer(app, { headersTimeout: 5_000, requestTimeout: 5_000, keepAliveTimeout: 5_000, socketTimeout: 5_000, maxConnections: 3 });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const open = (): Promise<net.Socket> => new Promise((resolve) => { const s = net.connect(port, '127.0.0.1', () => resolve(s)); s.on('error', () => {}); });
    const held = await Promise.all([open(), open(), open()]);
    try {
      await new Promise((r) => setTimeout(r, 100));
      const extra = await open();
      const closed = await new Promise<boolean>((resolve) => {
        extra.on('close', () => resolve(true));
        setTimeout(() => resolve(false), 2000);
      });
      expect(closed).toBe(true);
      const answer = await new Promise<string>((resolve) => {
        let got = '';
        held[0].on('data', (d) => {
          got += d;
          if (got.includes('\r\n\r\n')) resolve(got);
        });
        held[0].write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(answer).toMatch(/^HTTP\/1.1 200/);
    } finally {
      for (const s of held) s.destroy();
      server.close();
    }
  });

  it('closes a connection that sends its headers too slowly (slowloris)', async () => {
    const { app } = makeApp();
    const server = createHttpServer(app, { headersTimeout: 300, requestTimeout: 500, keepAliveTimeout: 200, socketTimeout: 5_000 });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const answer = await new Promise<string>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        let got = '';
        s.on('data', (d) => (got += d));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        s.write('POST /hard/v1/thing/create HTTP/1.1\r\nHost: x\r\n');
        const drip = setInterval(() => (s.writable ? s.write('X-Slow: 1\r\n') : clearInterval(drip)), 100);
        s.on('close', () => clearInterval(drip));
      });
      expect(answer === '' || /^HTTP\/1.1 408/.test(answer)).toBe(true);
      expect(server.keepAliveTimeout).toBe(200);
    } finally {
      server.close();
    }
  });

  it('closes a connection whose body trickles in past the request timeout (slow POST), and one that goes silent', async () => {
    const { app, handled } = makeApp();
    const server = createHttpServer(app, { headersTimeout: 300, requestTimeout: 600, keepAliveTimeout: 200, socketTimeout: 400 });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const token = await bearer();
    const before = handled();
    const talk = (send: (s: net.Socket) => void) =>
      new Promise<{ got: string; ms: number }>((resolve) => {
        const start = Date.now();
        const s = net.connect(port, '127.0.0.1');
        let got = '';
        s.on('data', (d) => (got += d));
        s.on('close', () => resolve({ got, ms: Date.now() - start }));
        s.on('error', () => {});
        send(s);
      });
    try {
      // headers at once, then one byte of a 10,000-byte body every 50 ms: never a complete request
      const slow = await talk((s) => {
        s.write(`POST /hard/v1/thing/create HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{`);
        const drip = setInterval(() => (s.writable ? s.write(' ') : clearInterval(drip)), 50);
        s.on('close', () => clearInterval(drip));
      });
      expect(slow.got === '' || /^HTTP\/1.1 408/.test(slow.got)).toBe(true);
      expect(slow.ms).toBeLessThan(5_000);
      // a connection that says nothing at all after connecting
      const silent = await talk(() => {});
      expect(silent.got === '' || /^HTTP\/1.1 408/.test(silent.got)).toBe(true);
      expect(silent.ms).toBeLessThan(5_000);
      expect(handled()).toBe(before);
    } finally {
      server.close();
    }
  });
});
