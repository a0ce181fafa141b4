import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestIdentity } from '../test-support';

describe('identity endpoint list', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let auth: string;
  beforeAll(async () => {
    t = await createTestIdentity();
    auth = await bearer({ roleType: 'USER', domainId: 'd1' });
  });
  afterAll(() => t.close());
  const list = (body: object) => request(t.app).post('/identity/v1/endpoint/list').set('Authorization', auth).send(body);

  it('lists every module with its public endpoint', async () => {
    const res = await list({ domain_id: 'd1' });
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(8);
    const identity = res.body.results.find((e: any) => e.service === 'identity');
    expect(identity).toEqual({
      service: 'identity',
      name: 'identity',
      endpoint: `${t.deps.config.publicBaseUrl}/identity`,
      internal_endpoint: 'http://127.0.0.1:8101',
      state: 'ACTIVE',
      version: expect.any(String),
    });
  });

  it('filters by service and endpoint_type', async () => {
    const res = await list({ service: 'monitoring', endpoint_type: 'internal' });
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0].endpoint).toBe('http://127.0.0.1:8105');
    // a free string, as upstream's (which ignores it): another value answers the public endpoints
    const other = await list({ service: 'monitoring', endpoint_type: 'private' });
    expect([other.status, other.body.results[0].endpoint]).toEqual([200, `${t.deps.config.publicBaseUrl}/monitoring`]);
    expect((await list({ endpoint_type: 'x'.repeat(65) })).status).toBe(400);
    expect((await list({ service: 'nope' })).body).toEqual({ results: [], total_count: 0 });
  });

  it('takes the query DSL: filter, sort, page, only; a bad key is a 400', async () => {
    const res = await list({ query: { filter: [{ key: 'service', value: ['identity', 'opsflow', 'inventory'], operator: 'in' }], sort: [{ key: 'service', desc: true }], page: { start: 1, limit: 2 }, only: ['service'] } });
    expect(res.body).toEqual({ results: [{ service: 'opsflow' }, { service: 'inventory' }], total_count: 3 });
    const bad = await list({ query: { filter: [{ key: 'color', value: 'x', operator: 'eq' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('color');
  });

  it('runs a caller\'s regex in linear time: a catastrophic pattern answers at once, and token issue still answers', async () => {
    const bomb = list({ query: { filter: [{ k: 'endpoint', v: '^(.|.|.)*(.|.)*Z$', o: 'regex' }] } });
    const issue = request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: 'nobody', password: 'x' }, domain_id: 'd1' });
    const [b, i] = await Promise.all([bomb, issue]);
    expect(b.status).toBe(200);
    expect(b.body).toEqual({ results: [], total_count: 0 });
    expect(i.status).toBe(401);
    const lookahead = await list({ query: { filter: [{ k: 'endpoint', v: '(?=http)', o: 'regex' }] } });
    expect(lookahead.status).toBe(400);
    expect(lookahead.body.error.message).toContain('query.filter[0].value');
  });

  it('needs a token', async () => {
    expect((await request(t.app).post('/identity/v1/endpoint/list').send({})).status).toBe(401);
  });
});
