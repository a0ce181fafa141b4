import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '@platform/core';
import { bearer, testVerifier } from '@platform/testing';
import { createServiceApp, explicitZero, operation, parseRequest, request as requestSchema, withoutProto3Defaults } from './index';

const access = { permission: 'demo:Thing.write', roles: ['WORKSPACE_OWNER', 'DOMAIN_ADMIN'] as const };
const item = z.strictObject({ key: z.string().min(1), label: z.string().min(1).optional(), weight: z.number().optional() });
const schema = requestSchema({
  name: z.string().min(1),
  parent_id: z.string().min(1).optional(),
  size: z.number().int().positive().optional(),
  flag: z.boolean().optional(),
  labels: z.array(z.string()).min(1).optional(),
  tags: z.record(z.string(), z.unknown()).optional(),
  mode: z.enum(['AUTO', 'MANUAL']).optional(),
  scope: z.enum(['DOMAIN', 'WORKSPACE']).optional(),
  format: z.enum(['CSV', 'EXCEL']).optional(),
  nested: z.strictObject({ a: z.string().min(1).optional(), b: z.number().optional(), inner: z.strictObject({ c: z.boolean().optional() }).optional() }).optional(),
  items: z.array(item).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  sync: explicitZero(z.enum(['NONE', 'MANUAL']).optional()),
  keep: explicitZero(z.boolean().optional()),
  required_flag: z.boolean(),
});
const app = createServiceApp({
  service: 'demo',
  logger: createLogger('demo', 'silent'),
  verifier: testVerifier,
  operations: [operation({ path: '/demo/v1/thing/echo', access, schema, response: z.strictObject({ input: z.unknown() }), handler: (input) => ({ input }) })],
});

const send = async (body: unknown) => request(app).post('/demo/v1/thing/echo').set('Authorization', await bearer()).send(body as object);

describe('proto3 defaults in requests', () => {
  it('reads an optional field at its proto3 default as absent, whatever its type', async () => {
    const res = await send({
      domain_id: '',
      name: 'x',
      parent_id: '',
      size: 0,
      flag: false,
      labels: [],
      tags: {},
      mode: 'NONE',
      scope: 'SCOPE_NONE',
      format: 'NONE_FILE_FORMAT',
      nested: null,
      items: [],
      data: {},
      required_flag: false,
    });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: false });
  });

  it('applies inside nested messages and the messages of a list; a message left empty is not set', async () => {
    const res = await send({
      name: 'x',
      required_flag: true,
      nested: { a: '', b: 0, inner: { c: false } },
      items: [{ key: 'k', label: '', weight: 0 }, { key: 'j', label: 'J', weight: 2 }],
    });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: true, items: [{ key: 'k' }, { key: 'j', label: 'J', weight: 2 }] });
  });

  it('keeps values that are not defaults, and the content of free-form values', async () => {
    const res = await send({ name: 'x', required_flag: true, size: 3, flag: true, mode: 'AUTO', data: { a: '', b: 0, c: false, d: [] } });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: true, size: 3, flag: true, mode: 'AUTO', data: { a: '', b: 0, c: false, d: [] } });
  });

  it('answers REQUIRED for a required field that is absent, null, "" or at its zero enum value', async () => {
    const res = await send({ name: '', required_flag: false });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect(res.body.error.message).toContain('name');
    expect((await send({ name: null, required_flag: false })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await send({ name: 'x', required_flag: null })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await send({ name: 3, required_flag: false })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    const missing = await send({ name: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    const nested = await send({ name: 'x', required_flag: true, items: [{ key: '' }] });
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toContain('items[0].key');
  });

  it('keeps the zero value of a field marked explicitZero', async () => {
    const res = await send({ name: 'x', required_flag: true, sync: 'NONE', keep: false });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: true, sync: 'NONE', keep: false });
  });

  it('still refuses an unknown field, even at a default value', async () => {
    const res = await send({ name: 'x', required_flag: true, colour: '' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('colour');
  });

  it('does not change the body it was given', () => {
    const body = { name: 'x', parent_id: '', nested: { a: '' } };
    const out = withoutProto3Defaults(schema, body);
    expect(out).toEqual({ name: 'x' });
    expect(body).toEqual({ name: 'x', parent_id: '', nested: { a: '' } });
  });
});

describe('required enums (zod answers invalid_value for them)', () => {
  const s = requestSchema({ grant_type: z.enum(['REFRESH_TOKEN']), scope: z.enum(['DOMAIN', 'WORKSPACE']).optional() });
  const codeOf = (body: unknown) => {
    try {
      parseRequest(s, body);
      return 'ok';
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  test('left out, null, "" or GRANT_TYPE_NONE is REQUIRED; another name is INVALID', () => {
    expect(codeOf({})).toBe('ERROR_REQUIRED_PARAMETER');
    expect(codeOf({ grant_type: null })).toBe('ERROR_REQUIRED_PARAMETER');
    expect(codeOf({ grant_type: '' })).toBe('ERROR_REQUIRED_PARAMETER');
    expect(codeOf({ grant_type: 'GRANT_TYPE_NONE' })).toBe('ERROR_REQUIRED_PARAMETER');
    expect(codeOf({ grant_type: 'PASSWORD' })).toBe('ERROR_INVALID_PARAMETER');
    expect(codeOf({ grant_type: 'REFRESH_TOKEN', scope: 'SCOPE_NONE' })).toBe('ok');
  });
});

describe("protobuf's JSON names (lowerCamelCase)", () => {
  test('every field a schema names is accepted in its JSON name, at every level, and read under its proto name', async () => {
    const res = await send({ name: 'x', requiredFlag: true, parentId: 'p', nested: { inner: { c: true } }, items: [{ key: 'k', label: 'L' }] });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: true, parent_id: 'p', nested: { inner: { c: true } }, items: [{ key: 'k', label: 'L' }] });
  });
  test('proto3 defaults under a JSON name are not set either', async () => {
    const res = await send({ name: 'x', requiredFlag: false, parentId: '' });
    expect(res.body.input).toEqual({ name: 'x', required_flag: false });
  });
  test('a field given in both spellings is a 400 naming it, at any level', async () => {
    const top = await send({ name: 'x', required_flag: true, requiredFlag: true });
    expect([top.status, top.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(top.body.error.message).toContain('requiredFlag');
    const q = z.strictObject({ filter: z.array(z.unknown()).optional(), filter_or: z.array(z.unknown()).optional() });
    expect(() => parseRequest(requestSchema({ query: q }), { query: { filter_or: [], filterOr: [] } })).toThrow(/query\.filterOr/);
    expect(parseRequest(requestSchema({ query: q }), { query: { filterOr: [{ k: 1 }] } })).toEqual({ query: { filter_or: [{ k: 1 }] } });
  });
  test('the content of free-form values (tags, data) is never renamed', async () => {
    const res = await send({ name: 'x', required_flag: true, tags: { someKey: 'v', some_key: 'w' }, data: { parentId: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.input).toEqual({ name: 'x', required_flag: true, tags: { someKey: 'v', some_key: 'w' }, data: { parentId: 1 } });
  });
  test('a JSON name that is not a field is still an unknown field; __proto__ and constructor are never renamed', async () => {
    const res = await send({ name: 'x', required_flag: true, parentGroupId: 'g' });
    expect(res.body.error.message).toContain('parentGroupId');
    const proto = await send(JSON.parse('{"name":"x","required_flag":true,"__proto__":{"parentId":"p"}}'));
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).parentId).toBeUndefined();
  });
});

describe('validation errors name the key inside a query', () => {
  const q = z.strictObject({
    group_by: z.array(z.union([z.string().min(1), z.strictObject({ key: z.string().min(1), name: z.string().min(1) })])).optional(),
    keys: z.array(z.strictObject({ key: z.string().min(1), name: z.string().min(1) })).optional(),
  });
  const parse = (body: unknown) => {
    try {
      parseRequest(requestSchema({ query: q }), body);
    } catch (e) {
      return (e as { details?: { key?: string }; message: string }).details?.key ?? (e as Error).message;
    }
    return 'ok';
  };
  test('a misspelt key is named before the right spelling it leaves missing', () => {
    expect(parse({ query: { keys: [{ key: 'a', nme: 'b' }] } })).toBe('query.keys[0].nme');
  });
  test('a value of several forms is checked against the form it has', () => {
    expect(parse({ query: { group_by: [{ key: 'a', nme: 'b' }] } })).toBe('query.group_by[0].nme');
    expect(parse({ query: { group_by: [{ key: 'a' }] } })).toBe('query.group_by[0].name');
    expect(parse({ query: { group_by: [3] } })).toBe('query.group_by[0]');
    expect(parse({ query: { group_by: ['a', { key: 'a', name: 'b' }] } })).toBe('ok');
  });
});
