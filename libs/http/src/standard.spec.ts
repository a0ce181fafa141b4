import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '@platform/core';
import { errors } from '@platform/errors';
import { bearer, testVerifier } from '@platform/testing';
import { buildOpenApi, createServiceApp, Empty, id, idOperation, mergeErrors, operation, request as requestSchema, NOT_FOUND } from './index';

const access = { permission: 'demo:Thing.read', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };
const Thing = z.strictObject({ thing_id: z.string().describe('The thing.'), seen_by: z.string().describe('Who asked.') }).describe('A thing.');
const calls: string[] = [];
const get = idOperation({
  path: '/demo/v1/thing/get',
  access,
  id: { thing_id: id.describe('The thing.') },
  response: Thing,
  call: (auth, thingId) => {
    calls.push(thingId);
    if (thingId === 'gone') throw errors.notFound('thing_id', thingId);
    return { thing_id: thingId, seen_by: auth.userId };
  },
});
const removed: { thingId: string; keep?: boolean; domain_id: string }[] = [];
const remove = idOperation({
  path: '/demo/v1/thing/delete',
  access,
  id: { thing_id: id },
  fields: { keep: z.boolean().optional().describe('Keep its history.') },
  domainId: 'required',
  response: Empty,
  errors: mergeErrors(NOT_FOUND, { 400: ['ERROR_IN_USE'] }),
  call: async (_auth, thingId, input) => {
    removed.push({ thingId, keep: input.keep, domain_id: input.domain_id });
    return { thing_id: thingId }; // what a service's delete may answer: not the operation's answer
  },
});
const app = createServiceApp({ service: 'demo', logger: createLogger('demo', 'silent'), verifier: testVerifier, operations: [get, remove] });

describe('idOperation', () => {
  it('is the operation written out: the same request schema, NOT_FOUND by default, the id passed to its call', () => {
    const written = operation({
      path: '/demo/v1/thing/get',
      access,
      schema: requestSchema({ thing_id: id.describe('The thing.') }),
      response: Thing,
      errors: NOT_FOUND,
      handler: () => undefined,
    });
    expect(get.errors).toEqual(NOT_FOUND);
    expect(buildOpenApi('demo', [get])).toEqual(buildOpenApi('demo', [written]));
    expect(idOperation({ path: '/x/v1/a/disable', access, id: { a_id: id }, response: Thing, errors: { 400: ['ERROR_X'] }, call: () => ({}) }).errors).toEqual({ 400: ['ERROR_X'] });
  });

  it('with fields, a required domain_id and an Empty answer, is still the operation written out', () => {
    const written = operation({
      path: '/demo/v1/thing/delete',
      access,
      schema: requestSchema({ thing_id: id, keep: z.boolean().optional().describe('Keep its history.') }, { domainId: 'required' }),
      response: Empty,
      errors: { 404: ['ERROR_NOT_FOUND'], 400: ['ERROR_IN_USE'] },
      handler: () => undefined,
    });
    expect(buildOpenApi('demo', [remove])).toEqual(buildOpenApi('demo', [written]));
    expect(Object.keys((remove.schema as z.ZodObject).shape)).toEqual(['domain_id', 'thing_id', 'keep']);
  });

  it('answers {} for an Empty operation whatever its call returns, and gives the call the whole request', async () => {
    const ok = await request(app).post('/demo/v1/thing/delete').set('Authorization', await bearer()).send({ domain_id: 'domain-test', thing_id: 't-2', keep: true });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({});
    const noDomain = await request(app).post('/demo/v1/thing/delete').set('Authorization', await bearer()).send({ thing_id: 't-3' });
    expect(noDomain.status).toBe(400);
    expect(noDomain.body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect(removed).toEqual([{ thingId: 't-2', keep: true, domain_id: 'domain-test' }]);
  });

  it('answers through the app: the caller and the id to its call, its refusals in the envelope', async () => {
    const ok = await request(app).post('/demo/v1/thing/get').set('Authorization', await bearer()).send({ thing_id: 't-1' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ thing_id: 't-1', seen_by: 'test-user' });
    const missing = await request(app).post('/demo/v1/thing/get').set('Authorization', await bearer()).send({ thing_id: 'gone' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('ERROR_NOT_FOUND');
    const noId = await request(app).post('/demo/v1/thing/get').set('Authorization', await bearer()).send({});
    expect(noId.status).toBe(400);
    expect(noId.body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect(calls).toEqual(['t-1', 'gone']);
  });

  it('refuses a definition without exactly one id field', () => {
    expect(() => idOperation({ path: '/x/v1/a/get', access, id: {}, response: Thing, call: () => ({}) })).toThrow('one id field');
    expect(() => idOperation({ path: '/x/v1/a/get', access, id: { a_id: id, b_id: id }, response: Thing, call: () => ({}) })).toThrow('one id field');
  });
});
