import request from 'supertest';
import { z } from 'zod';
import { createLogger, MODULES } from '@platform/core';
import { errors } from '@platform/errors';
import { bearer, mintToken, testVerifier } from '@platform/testing';
import { createServiceApp, operation, request as requestSchema, listResponse, Empty, listOf, NOT_FOUND } from './index';

const access = { permission: 'demo:Thing.write', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };
let down = false;
const app = createServiceApp({
  service: 'demo',
  logger: createLogger('demo', 'silent'),
  verifier: testVerifier,
  bodyLimit: '2kb',
  readiness: { postgres: async () => (down ? Promise.reject(new Error('down')) : 1), other: async () => 1 },
  operations: [
    operation({
      path: '/demo/v1/thing/create',
      access,
      schema: requestSchema({ name: z.string().min(1), size: z.number().int().optional(), nested: z.object({ a: z.string() }).optional() }),
      response: z.strictObject({ name: z.string(), domain_id: z.string() }), handler: (input, ctx) => ({ name: input.name, domain_id: ctx.auth.domainId }),
    }),
    operation({ path: '/demo/v1/thing/list', access, schema: requestSchema({}), response: listOf(z.strictObject({ a: z.number() })), handler: () => listResponse([{ a: 1 }], 1) }),
    operation({ path: '/demo/v1/thing/delete', access, schema: requestSchema({}), response: Empty, handler: () => undefined }),
    operation({ path: '/demo/v1/thing/missing', access, schema: requestSchema({}), response: Empty, errors: NOT_FOUND, handler: () => { throw errors.notFound('thing_id', 'x'); } }),
    operation({
      path: '/demo/v1/thing/crash',
      access: 'public',
      schema: requestSchema({}),
      response: Empty, handler: () => {
        throw new Error('SELECT secret FROM users -- boom');
      },
    }),
  ],
});

describe('service app', () => {
  it('runs an operation with a valid token and a valid body', async () => {
    const res = await request(app).post('/demo/v1/thing/create').set('Authorization', await bearer()).send({ name: 'x' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'x', domain_id: 'domain-test' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
  });

  it('keeps a given request id', async () => {
    const res = await request(app).post('/demo/v1/thing/list').set('Authorization', await bearer()).set('x-request-id', 'abc-123').send({});
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(res.body).toEqual({ results: [{ a: 1 }], total_count: 1 });
  });

  it('refuses a body domain_id that is not the token\'s domain', async () => {
    const ok = await request(app).post('/demo/v1/thing/create').set('Authorization', await bearer()).send({ name: 'x', domain_id: 'domain-test' });
    expect(ok.status).toBe(200);
    const other = await request(app).post('/demo/v1/thing/create').set('Authorization', await bearer()).send({ name: 'x', domain_id: 'domain-other' });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect(other.body.error.message).toContain('domain_id');
  });

  it('answers Empty as {}', async () => {
    const res = await request(app).post('/demo/v1/thing/delete').set('Authorization', await bearer());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });

  it('refuses a missing, malformed, expired or refresh token with 401', async () => {
    for (const auth of [undefined, 'Basic abc', 'Bearer not.a.token', `Bearer ${await mintToken({ ttlSeconds: -10 })}`, `Bearer ${await mintToken({ tokenType: 'REFRESH_TOKEN' })}`]) {
      const r = request(app).post('/demo/v1/thing/create');
      if (auth) r.set('Authorization', auth);
      const res = await r.send({ name: 'x' });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    }
  });

  it('refuses a role that the operation does not allow with 403', async () => {
    const res = await request(app).post('/demo/v1/thing/create').set('Authorization', await bearer({ roleType: 'WORKSPACE_MEMBER' })).send({ name: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    const narrowed = await request(app).post('/demo/v1/thing/create').set('Authorization', await bearer({ permissions: ['demo:Thing.read'] })).send({ name: 'x' });
    expect(narrowed.status).toBe(403);
  });

  it('names the field of a validation failure', async () => {
    const auth = await bearer();
    const missing = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toEqual({ code: 'ERROR_REQUIRED_PARAMETER', message: 'Required parameter. (key = name)', status: 400 });
    const wrong = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({ name: 'x', size: 'big' });
    expect(wrong.body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect(wrong.body.error.message).toContain('key = size');
    const nested = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({ name: 'x', nested: { a: 1 } });
    expect(nested.body.error.message).toContain('key = nested.a');
    const unknown = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({ name: 'x', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('key = colour');
  });

  it('answers malformed JSON, wrong content type, oversized and non-object bodies with 4xx envelopes', async () => {
    const auth = await bearer();
    const bad = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send('{"name": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('ERROR_INVALID_JSON');
    const text = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).set('Content-Type', 'text/plain').send('name=x');
    expect(text.status).toBe(415);
    const big = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({ name: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('ERROR_PAYLOAD_TOO_LARGE');
    for (const body of ['[1,2]', '"str"', '42', 'null']) {
      const res = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.status).toBe(400);
    }
  });

  it('answers unknown paths with 404 and other methods with 405', async () => {
    const nf = await request(app).post('/demo/v1/nope/list').send({});
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('ERROR_NOT_FOUND');
    const get = await request(app).get('/demo/v1/thing/list');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.body.error.code).toBe('ERROR_METHOD_NOT_ALLOWED');
  });

  it('passes service errors through the envelope', async () => {
    const res = await request(app).post('/demo/v1/thing/missing').set('Authorization', await bearer()).send({});
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'ERROR_NOT_FOUND', message: 'Resource not found. (thing_id = x)', status: 404 } });
  });

  it('answers an unexpected exception with a 500 that leaks nothing', async () => {
    const res = await request(app).post('/demo/v1/thing/crash').send({});
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'ERROR_UNKNOWN', message: 'Internal error.', status: 500 } });
    expect(JSON.stringify(res.body)).not.toMatch(/SELECT|stack/);
  });

  it('serves health, readiness and metrics', async () => {
    expect((await request(app).get('/healthz')).body.status).toBe('ok');
    expect((await request(app).get('/readyz')).status).toBe(200);
    down = true;
    const r = await request(app).get('/readyz');
    down = false;
    expect(r.status).toBe(503);
    expect(r.body.checks.postgres).toBe('unavailable');
    // Only the named checks: a deployment whose traffic does not need the one that is down stays ready.
    down = true;
    const only = await request(app).get('/readyz?only=other');
    const both = await request(app).get('/readyz?only=other,postgres');
    const unknown = await request(app).get('/readyz?only=nope');
    down = false;
    expect([only.status, only.body.checks]).toEqual([200, { other: 'ok' }]);
    expect(both.status).toBe(503);
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    await request(app).post('/demo/v1/thing/list').set('Authorization', await bearer()).send({});
    const m = await request(app).get('/metrics');
    expect(m.text).toMatch(/http_request_duration_seconds_count\{[^}]*operation="\/demo\/v1\/thing\/list"/);
  });
});

describe('client address', () => {
  const make = () =>
    createServiceApp({
      service: 'ip',
      logger: createLogger('ip', 'silent'),
      operations: [operation({ path: '/ip/v1/who/ami', access: 'public', schema: requestSchema({}), response: z.strictObject({ ip: z.string() }), handler: (_i, ctx) => ({ ip: ctx.clientIp }) })],
    });
  afterEach(() => delete process.env.TRUST_PROXY);

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const viaProxy = await request(make()).post('/ip/v1/who/ami').set('X-Forwarded-For', '203.0.113.9').send({});
    expect(viaProxy.body.ip).toBe('203.0.113.9'); // the test connects from loopback, trusted by default
    process.env.TRUST_PROXY = 'false';
    const direct = await request(make()).post('/ip/v1/who/ami').set('X-Forwarded-For', '203.0.113.9').send({});
    expect(direct.body.ip).toMatch(/127\.0\.0\.1|::1/);
    process.env.TRUST_PROXY = '10.0.0.0/8';
    const untrusted = await request(make()).post('/ip/v1/who/ami').set('X-Forwarded-For', '203.0.113.9').send({});
    expect(untrusted.body.ip).toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('openapi', () => {
  it('documents every operation with its request schema', async () => {
    const res = await request(app).get('/demo/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual([
      '/demo/v1/thing/crash',
      '/demo/v1/thing/create',
      '/demo/v1/thing/delete',
      '/demo/v1/thing/list',
      '/demo/v1/thing/missing',
    ]);
    const create = res.body.paths['/demo/v1/thing/create'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(create['x-role-types']).toEqual(['WORKSPACE_OWNER', 'DOMAIN_ADMIN']);
    expect(res.body.paths['/demo/v1/thing/crash'].post.security).toEqual([]);
  });

  it('moves the definitions of a recursive schema to components, so every $ref resolves in the document', async () => {
    type Tree = { name: string; children?: Tree[] };
    const TreeSchema: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(TreeSchema).optional() }));
    const ops = ['a', 'b'].map((v) => operation({ path: `/trees/v1/tree/${v}`, access: 'public', schema: requestSchema({ tree: TreeSchema }), response: Empty, handler: () => ({}) }));
    const doc = (await request(createServiceApp({ service: 'trees', logger: createLogger('trees', 'silent'), operations: ops })).get('/trees/openapi.json')).body;
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk);
      if (!v || typeof v !== 'object') return;
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref') refs.push(x as string);
        else walk(x);
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.split('/').pop()!]).toBeDefined();
    }
    // one definition, shared by both operations (beside the envelope and Empty)
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Empty', 'ErrorEnvelope', '__schema0']);
  });

  it('serves the API reference: the page, its assets from swagger-ui-dist, and the platform page at /docs', async () => {
    const page = await request(app).get('/demo/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self';/);
    expect(page.text).toContain('{"url":"/demo/openapi.json"}');
    const scripts = [...page.text.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual(expect.arrayContaining(['/demo/docs/assets/swagger-ui-bundle.js', '/demo/docs/assets/swagger-ui.css', '/demo/docs/assets/init.js']));
    for (const src of scripts) {
      const asset = await request(app).get(src);
      expect([src, asset.status]).toEqual([src, 200]);
      expect(asset.headers['content-type']).toMatch(src.endsWith('.js') ? /javascript/ : /css/);
    }
    // Only the listed files of the package: no other file, no path out of it.
    expect((await request(app).get('/demo/docs/assets/package.json')).status).toBe(404);
    expect((await request(app).get('/demo/docs/assets/..%2F..%2Fpackage.json')).status).toBe(404);

    const platform = await request(app).get('/docs');
    expect(platform.status).toBe(200);
    const config = JSON.parse(/<script id="docs-config" type="application\/json">(.*?)<\/script>/.exec(platform.text)![1]);
    expect(config.urls.map((u: { url: string }) => u.url)).toEqual(Object.keys(MODULES).map((m) => `/${m}/openapi.json`));
    expect(platform.text).toContain('/demo/docs/assets/swagger-ui-bundle.js');
  });
});

describe('post routes (RouteHelpers.post)', () => {
  const seen: { params: Record<string, string>; body: string; via: string }[] = [];
  const hooks = createServiceApp({
    service: 'hooks',
    logger: createLogger('hooks', 'silent'),
    operations: [],
    routes: (a, { post }) => {
      post('/hooks/v1/hook/:id/:key/events', 'hook', async (req, params) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        if (params.key !== 'good key' && params.key !== 'k1') throw errors.permissionDenied('bad key');
        seen.push({ params, body: Buffer.concat(chunks).toString(), via: 'requestId' in req ? 'express' : 'ahead of express' });
        return { id: params.id };
      });
      a.all('/hooks/v1/hook/:id/:key/events', (req, _res, next) => next(errors.methodNotAllowed(req.method)));
    },
  });

  beforeEach(() => (seen.length = 0));

  it('answers an exact match ahead of Express, with the path parameters, the handler\'s answer and a request id', async () => {
    const res = await request(hooks).post('/hooks/v1/hook/w1/k1/events?x=1').set('x-request-id', 'rid-1').send({ a: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'w1' });
    expect(res.headers['x-request-id']).toBe('rid-1');
    expect(seen).toEqual([{ params: { id: 'w1', key: 'k1' }, body: '{"a":1}', via: 'ahead of express' }]);
  });

  it('leaves to Express what only its matching takes: an escaped segment (decoded) and another letter case', async () => {
    const escaped = await request(hooks).post('/hooks/v1/hook/w1/good%20key/events').send({});
    expect(escaped.status).toBe(200);
    const upper = await request(hooks).post('/HOOKS/v1/hook/w2/k1/events').send({});
    expect(upper.status).toBe(200);
    expect(seen.map((s) => [s.params.key, s.via])).toEqual([['good key', 'express'], ['k1', 'express']]);
    const malformed = await request(hooks).post('/hooks/v1/hook/w1/%E0%A4%A/events').send({});
    expect(malformed.status).toBe(400);
  });

  it('answers a throw with its envelope, another method with 405, and another path with 404', async () => {
    const denied = await request(hooks).post('/hooks/v1/hook/w1/wrong/events').send({});
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('ERROR_PERMISSION_DENIED');
    expect((await request(hooks).put('/hooks/v1/hook/w1/k1/events').send({})).status).toBe(405);
    expect((await request(hooks).post('/hooks/v1/hook/w1/k1/other').send({})).status).toBe(404);
    expect((await request(hooks).post('/hooks/v1/hook/w1//events').send({})).status).toBe(404);
  });
});
