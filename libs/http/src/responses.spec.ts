import { z } from 'zod';
import { Contract } from './contract';
import { buildOpenApi, undescribed, undocumentedAnswers } from './openapi';
import { operation } from './operation';
import { AnalyzeResult, Empty, listOf, NOT_FOUND, answerProblem, operationErrors, StatResult, structOut } from './responses';
import { request } from './schemas';

const ThingInfo = z.strictObject({ thing_id: z.string(), tags: structOut, plugin: z.strictObject({ id: z.string(), version: z.string() }) }).meta({ id: 'ThingInfo' });
const access = { permission: 'demo:Thing.read', roles: ['DOMAIN_ADMIN'] as const };
const get = operation({ path: '/demo/v1/thing/get', access, schema: request({ thing_id: z.string() }), response: ThingInfo, errors: NOT_FOUND, handler: () => ({}) });
const list = operation({
  path: '/demo/v1/thing/list',
  access,
  schema: request({ query: z.strictObject({ only: z.array(z.string()).optional() }).optional() }),
  response: listOf(ThingInfo).meta({ id: 'ThingsInfo' }),
  handler: () => ({}),
});
const remove = operation({ path: '/demo/v1/thing/delete', access: 'public', schema: request({}), response: Empty, errors: { 409: ['ERROR_THING_BUSY'] }, handler: () => ({}) });
const thing = { thing_id: 't-1', tags: { a: 1 }, plugin: { id: 'p', version: '1' } };

describe('response schemas in the OpenAPI document', () => {
  const doc = buildOpenApi('demo', [get, list, remove]) as any;

  it('emits each answer with its Info types shared as components, by $ref', () => {
    expect(doc.paths['/demo/v1/thing/get'].post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ThingInfo' });
    expect(doc.paths['/demo/v1/thing/list'].post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ThingsInfo' });
    expect(doc.components.schemas.ThingsInfo.properties.results.items).toEqual({ $ref: '#/components/schemas/ThingInfo' });
    // the list takes `query.only`: an answer may hold some fields only, so none is required
    expect(doc.components.schemas.ThingInfo).toMatchObject({ type: 'object', additionalProperties: false });
    expect(doc.components.schemas.ThingInfo.required).toBeUndefined();
    expect(doc.components.schemas.ThingInfo.properties.plugin.required).toBeUndefined();
    // without an operation that cuts it, every field is required
    const whole = buildOpenApi('demo', [get]) as any;
    expect(whole.components.schemas.ThingInfo).toMatchObject({ required: ['thing_id', 'tags', 'plugin'] });
    expect(doc.components.schemas.Empty).toMatchObject({ type: 'object', additionalProperties: false });
    expect(undocumentedAnswers(doc)).toEqual([]);
  });

  it('declares the error envelope per status with the codes the operation gives', () => {
    const responses = doc.paths['/demo/v1/thing/get'].post.responses;
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '401', '403', '404', '413', '415', '503', 'default']);
    const codes = (status: string, op = '/demo/v1/thing/get') => doc.paths[op].post.responses[status].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
    expect(codes('404')).toEqual(['ERROR_NOT_FOUND']);
    expect(codes('400')).toEqual(expect.arrayContaining(['ERROR_INVALID_PARAMETER', 'ERROR_REQUIRED_PARAMETER']));
    expect(responses['404'].content['application/json'].schema.allOf[0]).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    // a public operation gives no 401/403 of a token; its own codes are there
    expect(Object.keys(doc.paths['/demo/v1/thing/delete'].post.responses)).not.toContain('401');
    expect(codes('409', '/demo/v1/thing/delete')).toEqual(['ERROR_THING_BUSY']);
    expect(doc.components.schemas.ErrorEnvelope.properties.error.required).toEqual(['code', 'message', 'status']);
  });

  it('describes every operation (what it does, who may call it, its errors), its tags, contact and license', () => {
    expect(undescribed(doc)).toEqual([]);
    expect(doc.paths['/demo/v1/thing/get'].post.description).toBe(
      "Answers one thing by its id. Callable with an access token of DOMAIN_ADMIN (permission `demo:Thing.read`); a caller never reaches another domain's data. Notable errors: 404 ERROR_NOT_FOUND.",
    );
    expect(doc.paths['/demo/v1/thing/delete'].post.description).toBe('Deletes a thing. Needs no token. Notable errors: 409 ERROR_THING_BUSY.');
    expect(doc.tags).toEqual([{ name: 'thing', description: 'The thing resource of the demo module.' }]);
    expect(undescribed({ ...doc, tags: [], info: { title: 'x' } })).toEqual(expect.arrayContaining(['info: no contact', 'info: no license', '/demo/v1/thing/get: tag thing is not defined']));
  });

  it('validates answers against the document with Ajv (the contract check of every test)', () => {
    const contract = new Contract(doc);
    expect(contract.problem('/demo/v1/thing/get', 200, thing)).toBeUndefined();
    expect(contract.problem('/demo/v1/thing/list', 200, { results: [{ thing_id: 't-1' }], total_count: 1 })).toBeUndefined(); // cut by only
    expect(contract.problem('/demo/v1/thing/get', 200, { ...thing, colour: 'red' })).toMatch(/does not validate.*colour/);
    expect(contract.problem('/demo/v1/thing/list', 200, { results: [] })).toMatch(/total_count/);
    expect(contract.problem('/demo/v1/thing/get', 404, { error: { code: 'ERROR_NOT_FOUND', message: 'x', status: 404 } })).toBeUndefined();
    expect(contract.problem('/demo/v1/thing/get', 404, { error: { code: 'ERROR_THING_BUSY', message: 'x', status: 404 } })).toMatch(/does not validate/);
    expect(contract.problem('/demo/v1/thing/delete', 401, { error: { code: 'ERROR_AUTHENTICATE_FAILURE', message: 'x', status: 401 } })).toMatch(/declares no 401/);
    expect(contract.problem('/demo/v1/thing/nope', 200, {})).toMatch(/not in the OpenAPI document/);
  });

  it('documents requests as the servers take them: proto3 defaults of optional fields, JSON names, query short names', () => {
    const cond = z.strictObject({ key: z.string().min(1), value: z.unknown() }).meta({ 'x-aliases': { k: 'key', v: 'value' } });
    const create = operation({
      path: '/demo/v1/thing/create',
      access,
      schema: request({ name: z.string().min(1), parent_id: z.string().min(1).optional(), mode: z.enum(['AUTO']).optional(), size: z.number().positive().optional(), filter: z.array(cond).optional() }),
      response: ThingInfo,
      handler: () => ({}),
    });
    const d = buildOpenApi('demo', [create]) as any;
    const contract = new Contract(d);
    const ok = (body: object) => contract.requestProblem('/demo/v1/thing/create', body);
    expect(ok({ name: 'x' })).toBeUndefined();
    expect(ok({ name: 'x', parent_id: '', mode: 'NONE', size: 0, filter: [] })).toBeUndefined();
    expect(ok({ name: 'x', parent_id: null, mode: 'MODE_NONE', filter: null })).toBeUndefined();
    expect(ok({ name: 'x', filter: [{ k: 'a', v: 1 }, { key: 'b', value: 2 }] })).toBeUndefined();
    expect(ok({ name: 'x', filter: [{ v: 1 }] })).toMatch(/does not validate/);
    expect(ok({ name: 'x', mode: 'MANUAL' })).toMatch(/does not validate/);
    expect(ok({ name: 'x', colour: 'red' })).toMatch(/does not validate.*colour/);
    expect(ok({})).toMatch(/does not validate/);
    expect(d.paths['/demo/v1/thing/create'].post.requestBody.content['application/json'].schema.properties.parent_id['x-json-name']).toBe('parentId');
  });

  it('finds an operation whose answer is a bare object', () => {
    const bare = operation({ path: '/demo/v1/thing/bare', access, schema: request({}), response: z.looseObject({}), handler: () => ({}) });
    expect(undocumentedAnswers(buildOpenApi('demo', [get, bare]))).toEqual(['/demo/v1/thing/bare']);
  });
});

describe('answerProblem', () => {
  it('accepts an answer that matches, as the caller reads it (Dates as text)', () => {
    expect(answerProblem(get, 200, thing)).toBeUndefined();
    expect(answerProblem(list, 200, { results: [thing], total_count: 1 })).toBeUndefined();
    expect(answerProblem(remove, 200, {})).toBeUndefined();
    expect(answerProblem(get, 200, { ...thing, thing_id: new Date(0) })).toBeUndefined();
  });

  it('refuses a field the schema does not have, a missing field and a wrong type', () => {
    expect(answerProblem(get, 200, { ...thing, secret: 'x' })).toMatch(/secret/);
    expect(answerProblem(get, 200, { ...thing, plugin: { id: 'p' } })).toMatch(/plugin\.version/);
    expect(answerProblem(list, 200, { results: [thing] })).toMatch(/total_count/);
    expect(answerProblem(remove, 200, { deleted: true })).toMatch(/deleted/);
  });

  it('lets an answer cut by `only` leave fields out, never add one', () => {
    const input = { query: { only: ['thing_id', 'plugin.id'] } };
    expect(answerProblem(list, 200, { results: [{ thing_id: 't', plugin: { id: 'p' } }], total_count: 1 }, input)).toBeUndefined();
    expect(answerProblem(list, 200, { results: [{ thing_id: 't' }], total_count: 1 })).toMatch(/tags/);
    expect(answerProblem(list, 200, { results: [{ other: 1 }], total_count: 1 }, input)).toMatch(/other/);
  });

  it('checks an error answer: the envelope, a declared status, a declared code', () => {
    const envelope = (status: number, code: string) => ({ error: { code, message: 'm', status } });
    expect(answerProblem(get, 404, envelope(404, 'ERROR_NOT_FOUND'))).toBeUndefined();
    expect(answerProblem(get, 401, envelope(401, 'ERROR_AUTHENTICATE_FAILURE'))).toBeUndefined();
    expect(answerProblem(remove, 404, envelope(404, 'ERROR_NOT_FOUND'))).toMatch(/does not declare/);
    expect(answerProblem(get, 400, envelope(400, 'ERROR_SOMETHING_NEW'))).toMatch(/ERROR_SOMETHING_NEW/);
    expect(answerProblem(remove, 401, envelope(401, 'ERROR_AUTHENTICATE_FAILURE'))).toMatch(/401/);
    expect(answerProblem(get, 404, { message: 'not found' })).toMatch(/not the error envelope/);
  });

  it('knows the shared codes and the stat / analyze answers', () => {
    expect(operationErrors(get)[413]).toEqual(['ERROR_PAYLOAD_TOO_LARGE']);
    expect(StatResult.safeParse({ results: [{ n: 1 }, 'distinct value'], more: false }).success).toBe(true);
    expect(AnalyzeResult.safeParse({ results: [{ n: 1 }], more: true }).success).toBe(true);
    expect(AnalyzeResult.safeParse({ results: [] }).success).toBe(false);
  });
});
