import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');

function listen(handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

function post(port: number, p: string, body = '{}') {
  return new Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : undefined, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('local gateway', () => {
  let gateway: ChildProcess;
  let identity: http.Server;
  const port = 18080 + (process.pid % 500);

  beforeAll(async () => {
    identity = await listen((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'identity' });
        res.end(JSON.stringify({ path: req.url, body: JSON.parse(body || '{}'), auth: req.headers.authorization ?? null }));
      });
    });
    const env = {
      ...process.env,
      GATEWAY_PORT: String(port),
      IDENTITY_URL: `http://127.0.0.1:${(identity.address() as AddressInfo).port}`,
      MONITORING_URL: 'http://127.0.0.1:1', // nothing listens there
    };
    gateway = spawn(process.execPath, [path.join(root, 'tools/gateway/gateway.mjs')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => gateway.stdout!.once('data', () => resolve()));
  });
  afterAll(() => {
    gateway.kill('SIGTERM');
    identity.close();
  });

  it('routes by the first path segment, passing path, body and headers through', async () => {
    const res = await post(port, '/identity/v2/project-group/list', '{"name":"x"}');
    expect(res.status).toBe(200);
    expect(res.headers['x-upstream']).toBe('identity');
    expect(res.body).toEqual({ path: '/identity/v2/project-group/list', body: { name: 'x' }, auth: null });
  });

  it('sends /docs, the platform API reference, to identity, and nothing else outside a module', async () => {
    const docs = await new Promise<{ status: number; body: any; upstream: unknown }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/docs' }, (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data), upstream: res.headers['x-upstream'] }));
      }).on('error', reject);
    });
    expect(docs).toMatchObject({ status: 200, upstream: 'identity', body: { path: '/docs' } });
    expect((await post(port, '/docs/other')).status).toBe(404);
  });

  it('answers an unknown module with a 404 envelope and a down module with a 503 envelope', async () => {
    const nf = await post(port, '/nope/v1/x/list');
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('ERROR_NOT_FOUND');
    const down = await post(port, '/monitoring/v1/event/list');
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
  });

  it('balances over a module\'s replicas round robin (<MODULE>_URLS, as START_REPLICAS sets them)', async () => {
    const second = await listen((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'identity#2' }).end('{}'));
    });
    const rrPort = port + 1;
    const rr = spawn(process.execPath, [path.join(root, 'tools/gateway/gateway.mjs')], {
      env: {
        ...process.env,
        GATEWAY_PORT: String(rrPort),
        IDENTITY_URLS: [identity, second].map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`).join(','),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve) => rr.stdout!.once('data', () => resolve()));
      const seen: unknown[] = [];
      for (let i = 0; i < 4; i++) seen.push((await post(rrPort, '/identity/v2/project-group/list')).headers['x-upstream']);
      expect(seen.sort()).toEqual(['identity', 'identity', 'identity#2', 'identity#2']);
    } finally {
      rr.kill('SIGTERM');
      second.close();
    }
  });
});
