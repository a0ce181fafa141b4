import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '@platform/core';
import { errors } from '@platform/errors';
import { bearer, testVerifier } from '@platform/testing';
import { createServiceApp, Empty, isReadOperation, listOf, listResponse, operation, request as requestSchema } from './index';

describe('onWrite (read-your-write with a read replica)', () => {
  const access = { permission: 'demo:Thing.write', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };
  const told: { who: string; answered: boolean }[] = [];
  let answered = false;
  const app = createServiceApp({
    service: 'demo',
    logger: createLogger('demo', 'silent'),
    verifier: testVerifier,
    onWrite: async (auth) => {
      told.push({ who: `${auth.domainId}/${auth.userId}`, answered });
    },
    operations: [
      operation({ path: '/demo/v1/thing/create', access, schema: requestSchema({}), response: Empty, handler: () => undefined }),
      operation({ path: '/demo/v1/thing/fail', access, schema: requestSchema({}), response: Empty, handler: () => { throw errors.invalidParameter('x', 'no'); } }),
      operation({ path: '/demo/v1/thing/list', access, schema: requestSchema({}), response: listOf(z.strictObject({ a: z.number() })), handler: () => listResponse([{ a: 1 }], 1) }),
      operation({ path: '/demo/v1/thing/get', access, schema: requestSchema({}), response: Empty, handler: () => undefined }),
    ],
  });

  beforeEach(() => (told.length = 0));

  it('is told of every write, failed ones too, before the answer; never of a read', async () => {
    const auth = await bearer();
    expect((await request(app).post('/demo/v1/thing/list').set('Authorization', auth).send({})).status).toBe(200);
    expect((await request(app).post('/demo/v1/thing/get').set('Authorization', auth).send({})).status).toBe(200);
    expect(told).toEqual([]);
    const res = await request(app).post('/demo/v1/thing/create').set('Authorization', auth).send({});
    answered = true;
    expect(res.status).toBe(200);
    expect((await request(app).post('/demo/v1/thing/fail').set('Authorization', auth).send({})).status).toBe(400);
    expect(told).toHaveLength(2);
    expect(told[0]).toEqual({ who: expect.stringMatching(/^domain-test\//), answered: false });
  });

  it('knows reads by their last path segment', () => {
    for (const p of ['/a/v1/x/list', '/a/v1/x/get', '/a/v1/x/stat', '/a/v1/x/analyze', '/a/v1/x/export', '/a/v1/x/get-tokens']) expect(isReadOperation(p)).toBe(true);
    for (const p of ['/a/v1/x/create', '/a/v1/x/update', '/a/v1/x/sync', '/a/v1/x/listen', '/a/v1/x/delete']) expect(isReadOperation(p)).toBe(false);
  });
});
