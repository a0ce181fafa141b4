import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { FILTER_OPERATORS } from '@platform/query';
import { applyMutation, clone, mutationArb, protoPaths, REGEX_BOMBS, type Mutation } from './hostile';
import { Raw, withKey } from './json';
import { anyJson, arbitraryOf, identifier, type Hints, type JsonSchema } from './schema-arb';
import { DATE_FORMATS, DOMAIN, JSON_SUBKEYS, PLUGINS, PROJECT_OPERATORS, ROOT, STAT_OPERATORS, WORKSPACE, type Field, type Pools } from './vocab';

export type Role = 'DOMAIN_ADMIN' | 'WORKSPACE_OWNER' | 'WORKSPACE_MEMBER' | 'USER';
const ROLES: Role[] = ['DOMAIN_ADMIN', 'WORKSPACE_OWNER', 'WORKSPACE_MEMBER', 'USER'];

/** What a case is sent to: an operation of an app's OpenAPI, or one of the routes that are not operations. */
export interface Target {
  app: string;
  kind: 'operation' | 'webhook' | 'ingest' | 'download';
  /** The operation's path, or the route's template. */
  path: string;
  schema?: JsonSchema;
  /** Roles that may call it; `public` takes no token. */
  roles: Role[] | 'public';
  fields: Field[];
}

/** How a case authenticates; tokens are minted when it is sent. */
export type Auth =
  | { kind: 'none' }
  | { kind: 'role'; role: Role }
  | { kind: 'wrong-role'; role: Role }
  | { kind: 'other-domain'; role: Role }
  | { kind: 'refresh-token' }
  | { kind: 'expired'; role: Role }
  | { kind: 'garbage'; header: string }
  | { kind: 'ingest' };

export interface Case {
  target: Target;
  method: string;
  path: string;
  contentType?: string;
  auth: Auth;
  /** undefined: no body at all. */
  body: unknown;
  notes: string[];
}

const GARBAGE_HEADERS = ['Bearer ', 'Bearer x', 'Basic YTpi', 'Bearer eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiYSJ9.', 'bearer  a b', `Bearer ${'a'.repeat(10_000)}`, 'Bearer \u00e9'];

function authArb(t: Target): fc.Arbitrary<Auth> {
  if (t.kind === 'ingest') {
    return fc.oneof(
      { weight: 12, arbitrary: fc.constant<Auth>({ kind: 'ingest' }) },
      { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
      { weight: 1, arbitrary: fc.constantFrom<Auth>({ kind: 'role', role: 'DOMAIN_ADMIN' }, { kind: 'refresh-token' }) },
      { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_HEADERS).map<Auth>((header) => ({ kind: 'garbage', header })) },
    );
  }
  if (t.roles === 'public' || t.kind === 'webhook') {
    return fc.oneof({ weight: 12, arbitrary: fc.constant<Auth>({ kind: 'none' }) }, { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_HEADERS).map<Auth>((header) => ({ kind: 'garbage', header })) });
  }
  const allowed = t.roles;
  const wrong = ROLES.filter((r) => !allowed.includes(r));
  return fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...allowed).map<Auth>((role) => ({ kind: 'role', role })) },
    { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
    ...(wrong.length ? [{ weight: 1, arbitrary: fc.constantFrom(...wrong).map<Auth>((role) => ({ kind: 'wrong-role', role })) }] : []),
    { weight: 1, arbitrary: fc.constantFrom(...allowed).map<Auth>((role) => ({ kind: 'other-domain', role })) },
    { weight: 1, arbitrary: fc.constantFrom<Auth>({ kind: 'refresh-token' }, { kind: 'expired', role: allowed[0] }) },
    { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_HEADERS).map<Auth>((header) => ({ kind: 'garbage', header })) },
  );
}

// ------------------------------------------------------------------------------------------ values

const fieldKeyArb = (fields: Field[]): fc.Arbitrary<string> => {
  const keys = fields.map((f) => f.key);
  const json = fields.filter((f) => f.type === 'json' || f.type === 'json_array').map((f) => f.key);
  return fc.oneof(
    { weight: 12, arbitrary: keys.length ? fc.constantFrom(...keys) : identifier },
    { weight: 6, arbitrary: json.length ? fc.tuple(fc.constantFrom(...json), fc.constantFrom(...JSON_SUBKEYS)).map(([a, b]) => `${a}.${b}`) : identifier },
    { weight: 2, arbitrary: identifier },
    { weight: 1, arbitrary: fc.constantFrom(...protoPaths(fields)) },
  );
};

/** A name the caller chooses (group keys and fields, analyze fields, select): mostly plain, sometimes a prototype key. */
const nameArb = fc.oneof({ weight: 8, arbitrary: identifier }, { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '__proto__.x', 'constructor.prototype.x', 'hasOwnProperty') });

const scalar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('prod', 'dev', 'running', 'stopped', 'aws', 'us-east-1', 'vm-1', DOMAIN, WORKSPACE, 'ACTIVE', 'ALERT', '2024-01') },
  { weight: 2, arbitrary: identifier },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 100 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
);

const isoDate = fc.constantFrom('2024-01-01T00:00:00Z', '2024-01-05', '2024-01-05T10:00:00.123+09:00', 'now', '1970-01-01', '2100-12-31T23:59:59Z', '2024-02-30');
const timediff = fc.constantFrom('now', 'now-1d', 'now/d', 'now/w', 'now/m+1h', 'now-30m', 'now-9999999w', 'yesterday');
const regexes = fc.constantFrom('^vm', 'prod$', '.*', 'a|b', '[0-9]+', '(?i)x', '[a-', '\\d{2,}', 'é');

/** One condition of the query DSL, mostly meaningful for the resource: an operator and a value that fit the key's type. */
function conditionArb(fields: Field[]): fc.Arbitrary<unknown> {
  const ops = Object.keys(FILTER_OPERATORS);
  const keysOf = (...types: string[]) => fields.filter((f) => types.includes(f.type)).map((f) => f.key);
  const cond = (keys: string[] | fc.Arbitrary<string>, operator: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>) =>
    fc.record({ key: Array.isArray(keys) ? fc.constantFrom(...keys) : keys, value, operator });
  const strs = fc.oneof(fc.constantFrom('prod', 'dev', 'running', 'vm-1', 'aws', 'us-east-1', 'ACTIVE', DOMAIN, WORKSPACE, 'Instance'), identifier);
  const nums = fc.oneof(fc.integer({ min: -5, max: 100 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
  const string = keysOf('string', 'string_array');
  const number = keysOf('number', 'integer');
  const datetime = keysOf('datetime');
  const json = fields.filter((f) => f.type === 'json' || f.type === 'json_array').map((f) => f.key);
  const sub = json.length ? fc.tuple(fc.constantFrom(...json), fc.constantFrom(...JSON_SUBKEYS)).map(([a, b]) => `${a}.${b}`) : identifier;
  const typed: { weight: number; arbitrary: fc.Arbitrary<unknown> }[] = [];
  if (string.length) {
    typed.push(
      { weight: 4, arbitrary: cond(string, fc.constantFrom('eq', 'not', 'contain', 'not_contain', 'lt', 'gte'), strs) },
      { weight: 2, arbitrary: cond(string, fc.constantFrom('in', 'not_in', 'contain_in', 'not_contain_in'), fc.array(strs, { minLength: 1, maxLength: 3 })) },
      { weight: 2, arbitrary: cond(string, fc.constant('regex'), regexes) },
      { weight: 1, arbitrary: cond(string, fc.constant('regex_in'), fc.array(regexes, { minLength: 1, maxLength: 3 })) },
      { weight: 1, arbitrary: cond(string, fc.constant('exists'), fc.boolean()) },
    );
  }
  if (number.length) typed.push({ weight: 2, arbitrary: cond(number, fc.constantFrom('eq', 'not', 'lt', 'lte', 'gt', 'gte'), nums) }, { weight: 1, arbitrary: cond(number, fc.constantFrom('in', 'not_in'), fc.array(nums, { maxLength: 3 })) });
  if (datetime.length) {
    typed.push(
      { weight: 2, arbitrary: cond(datetime, fc.constantFrom('datetime_gt', 'datetime_gte', 'datetime_lt', 'datetime_lte'), isoDate) },
      { weight: 1, arbitrary: cond(datetime, fc.constantFrom('timediff_gt', 'timediff_gte', 'timediff_lt', 'timediff_lte', 'timedelta_gt'), timediff) },
      { weight: 1, arbitrary: cond(datetime, fc.constantFrom('exists'), fc.boolean()) },
    );
  }
  if (json.length) {
    typed.push(
      { weight: 3, arbitrary: cond(sub, fc.constantFrom('eq', 'not', 'contain', 'lt', 'gt', 'exists', 'regex'), fc.oneof(strs, nums, fc.boolean())) },
      { weight: 1, arbitrary: cond(sub, fc.constantFrom('in', 'not_in'), fc.array(fc.oneof(strs, nums), { maxLength: 3 })) },
      { weight: 2, arbitrary: cond(json, fc.constant('match'), fc.dictionary(fc.oneof(fc.constantFrom(...JSON_SUBKEYS), identifier), fc.oneof(strs, nums), { maxKeys: 3, noNullPrototype: true })) },
    );
  }
  // Anything at all: the DSL's own validation.
  typed.push({ weight: 2, arbitrary: cond(fieldKeyArb(fields), fc.oneof(fc.constantFrom(...ops), identifier), fc.oneof(scalar, anyJson)) });
  // Attacks on the DSL itself: prototype paths in keys and match values, regex bombs, deep values.
  const protoMatch = fc.constantFrom<Record<string, unknown>>(
    withKey({}, '__proto__.x', 1),
    withKey({}, '__proto__.domain_id', 'domain-fuzz-evil'),
    withKey({}, 'constructor.prototype.x', 1),
    withKey({}, 'a.__proto__.b', 1),
    withKey({}, '__proto__', { x: 1 }),
    withKey({}, 'constructor', { prototype: { x: 1 } }),
    { a: withKey({}, '__proto__', { x: 1 }) },
  );
  const hostile = fc.oneof(
    cond(json.length ? json : sub, fc.constant('match'), protoMatch.map(clone)),
    cond(fc.constantFrom(...protoPaths(fields)), fc.constantFrom('eq', 'exists', 'match', 'in', 'regex', 'lt'), fc.oneof(strs, fc.constant(true), protoMatch.map(clone))),
    cond(string.length ? string : sub, fc.constantFrom('regex', 'regex_in'), fc.constantFrom(...REGEX_BOMBS)).map((c) => (c.operator === 'regex_in' ? { ...c, value: [c.value] } : c)),
    cond(fieldKeyArb(fields), fc.constantFrom('eq', 'in', 'match', 'contain'), fc.constantFrom(50_000, 10_000, 2_000).map((d) => new Raw(Buffer.from('['.repeat(d) + ']'.repeat(d)), `${d}-deep []`))),
  );
  typed.push({ weight: 4, arbitrary: hostile });
  const base = fc.oneof(...typed);
  // Upstream clients also send the short form {k, v, o}.
  return fc.tuple(base, fc.nat(9)).map(([c, n]) => {
    const { key: k, value: v, operator: o } = c as { key: string; value: unknown; operator: string };
    return n === 0 ? { k, v, o } : c;
  });
}

const PAYLOADS = (() => {
  const dir = path.join(ROOT, 'apps/monitoring/src/plugins/webhook/fixtures');
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown);
  } catch {
    return [{ alerts: [{ status: 'firing', labels: { alertname: 'x' } }] }];
  }
})();

/** A webhook payload: one of the plugins' sample payloads or any object. */
const payloadArb: fc.Arbitrary<unknown> = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PAYLOADS).map(clone) }, { weight: 1, arbitrary: fc.dictionary(identifier, anyJson, { maxKeys: 5, noNullPrototype: true }) });

/** Where the fuzzer's local CSV server is; data sources point at it so a sync collects. */
export interface GenEnv {
  pools: Pools;
  csvUrl: string;
  /** The same server's URLs that answer OUTBOUND_MARKER in every way (oracle.ts): no answer may quote it. */
  echo?: { csv: string; missing: string; prometheus: string };
}

/** A stat stage's own `unwind` is one stage kind among others: left to the stage hint. */
const skipUnwind = (p: string[]) => p.includes('aggregate');

const QUERY_KEYS = new Set(['query', 'search_query', 'analyze_query']);
const DELETE_VERBS = /\/(delete|deregister|remove-users|disable|update-role)$/;
/**
 * identity's user and role-binding operations, and a workspace's disable and delete, revoke tokens in
 * every module (#20): they get the identity pools' own users and workspaces, never the user "admin"
 * or the workspace the fuzzer's tokens are minted for (which would turn every later case into a 401).
 */
const REVOKING = /^\/identity\/v2\/(user|role-binding)\/|^\/identity\/v2\/workspace\/(delete|disable)$/;

/** Realistic values for a target, by the property they sit in. */
function hintsFor(t: Target, env: GenEnv): Hints {
  const { pools } = env;
  const victim = DELETE_VERBS.test(t.path);
  const keyArb = fieldKeyArb(t.fields);
  return (p, schema, sub) => {
    const name = p[p.length - 1];
    const parent = p[p.length - 2];
    const inQuery = p.some((x) => QUERY_KEYS.has(x));
    if (inQuery) {
      // One or two conditions: each more would make the query less likely to be valid as a whole.
      if (name === 'filter' || name === 'filter_or') return fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: name === 'filter' ? 4 : 1, arbitrary: fc.array(conditionArb(t.fields), { minLength: 1, maxLength: 2 }) });
      if (parent === 'conditions' && name === '[]') return conditionArb(t.fields);
      // A stat stage has exactly one of group, unwind, count, sort, limit, skip, match, project.
      if (parent === 'aggregate' && name === '[]' && schema.properties) {
        const props = schema.properties;
        return fc.oneof(...Object.keys(props).map((k) => sub({ type: 'object', properties: { [k]: props[k] }, required: [k] })));
      }
      // `unwind` needs an array field, which few resources have: mostly left out, so the rest of the query runs.
      if (name === 'unwind' && !skipUnwind(p)) return fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: sub(schema) });
      if (parent === 'group_by' && name === '[]') return fc.oneof(keyArb, fc.record({ key: keyArb, name: identifier }));
      if (name === 'name' || name === '{key}') return nameArb;
      if (name === 'key' || name === 'distinct' || name === 'date_field' || (name === 'path' && parent === 'unwind')) return keyArb;
      if (name === '[]' && (parent === 'only' || (parent === 'fields' && p[p.length - 3] === 'search_query'))) return keyArb;
      if (name === 'operator' && p.includes('project')) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PROJECT_OPERATORS) }, { weight: 1, arbitrary: identifier });
      if (name === 'operator' && p.includes('select')) return fc.constantFrom('add', 'subtract', 'multiply', 'divide', 'size', 'sum');
      if (name === 'operator' && p.includes('fields')) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...STAT_OPERATORS) }, { weight: 1, arbitrary: identifier });
      if (name === 'page') return fc.option(fc.record({ start: fc.integer({ min: -1, max: 5 }), limit: fc.integer({ min: -1, max: 20 }) }, { requiredKeys: [] }));
      if ((name === 'start' || name === 'end') && !p.includes('page')) return fc.constantFrom('2024-01', '2024-01-15', '2024', '2023-12', '2024-13', 'x');
      if (name === 'date_format') return fc.constantFrom(...DATE_FORMATS);
      if (name === 'keyword') return fc.oneof(fc.constantFrom('vm', 'prod aws', 'x'), identifier);
      return undefined;
    }
    // A list's equality filters on top of the query: mostly left out, so rows reach the query.
    if (p.length === 1 && t.path.endsWith('/list') && !['domain_id', 'query', 'only'].includes(name)) return fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: sub(schema) });
    if (name === 'only' || (parent === 'only' && name === '[]')) return name === 'only' ? fc.array(keyArb, { maxLength: 3 }) : keyArb;
    if (name === 'domain_id') return fc.oneof({ weight: 20, arbitrary: fc.constant(DOMAIN) }, { weight: 1, arbitrary: fc.constant('domain-fuzz-other') });
    if (REVOKING.test(t.path) && (name === 'user_id' || name === 'workspace_id') && p.length === 1) {
      const ids = pools.ids('identity', `managed_${name}`, victim);
      if (ids.length) return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: identifier });
    }
    if (name === 'workspace_id') return fc.oneof({ weight: 8, arbitrary: fc.constant(WORKSPACE) }, { weight: 1, arbitrary: identifier });
    if (name === 'user_id' || (parent === 'users' && name === '[]')) return fc.oneof(fc.constantFrom('admin', 'fuzz-user'), identifier);
    if (name === 'token' && t.path.endsWith('/token/grant')) return fc.oneof({ weight: 4, arbitrary: fc.constant(pools.refreshToken) }, { weight: 1, arbitrary: fc.string({ minLength: 1 }) });
    if (name && (name.endsWith('_id') || name === 'access_key')) {
      const ids = pools.ids(t.app, name, victim);
      if (ids.length) return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: identifier });
    }
    if (name === 'currency') return fc.oneof({ weight: 3, arbitrary: fc.constantFrom('KRW', 'USD', 'JPY', 'EUR') }, { weight: 1, arbitrary: identifier });
    if (name === 'plugin_id') return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...(PLUGINS[t.app] ?? ['plugin-x'])) }, { weight: 1, arbitrary: identifier });
    if (name === 'version' && p.includes('plugin_info')) return fc.constantFrom('1.0', '1.0.0', '1.1.0', '1.2.0', 'latest', '99');
    if (name === 'version') return fc.constantFrom('1.0.0', '1.1.0', '1.2.0', 'x');
    if (name === 'options' && (p.includes('plugin_info') || t.path.endsWith('/update-plugin'))) return pluginOptions(t.app, env);
    if (name === 'url') return fc.constantFrom('https://github.com/cloudforet-io/plugin-x', 'http://127.0.0.1:1/schema.json', 'file:///etc/passwd', 'git@github.com:a/b.git', 'http://169.254.169.254/latest', 'https://gitlab.com/a/b/-/raw/main/s.json');
    if (name === 'schema' && t.app === 'repository' && p.length === 1) return fc.oneof(fc.constant({ type: 'object', properties: { name: { type: 'string' } } }), fc.dictionary(identifier, anyJson, { maxKeys: 3, noNullPrototype: true }));
    if (parent === 'ip_addresses' && name === '[]') return fc.oneof(fc.ipV4(), fc.ipV6(), identifier);
    if (name === 'data' && t.path.endsWith('/event/create')) return payloadArb;
    if (name === 'created_at') return isoDate;
    if (name === 'tags' || name === 'data' || name === 'metadata' || name === 'secret_filter' || name === 'template')
      return fc.oneof({ weight: 2, arbitrary: fc.constantFrom({ env: 'prod' }, { env: 'dev', team: 'sre' }, { power_state: 'running', cpu: 2 }) }, { weight: 2, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...JSON_SUBKEYS), identifier), anyJson, { maxKeys: 4, noNullPrototype: true }) });
    if (name === 'timezone') return fc.constantFrom('UTC', 'Asia/Seoul', 'America/New_York', 'Mars/Olympus', '+09:00', '');
    if (name === 'start' && t.path.endsWith('/sync')) return fc.constantFrom('2024-01', '2024-01-01', 'x');
    if (name === 'rate') return fc.oneof(fc.constantFrom(1300, 1, 0, -1, 0.0001), fc.double({ noNaN: true, noDefaultInfinity: true }));
    return undefined;
  };
}

function pluginOptions(app: string, env: GenEnv): fc.Arbitrary<unknown> {
  const generic = fc.dictionary(identifier, anyJson, { maxKeys: 3, noNullPrototype: true });
  const echo = env.echo ? [env.echo.csv, env.echo.missing] : [];
  if (app === 'cost-analysis') return fc.oneof(fc.constant({ base_url: env.csvUrl }), fc.constant({ base_url: 'http://127.0.0.1:1/x.csv' }), ...echo.map((base_url) => fc.constant({ base_url })), generic);
  if (app === 'statistics') return fc.oneof(fc.constant({ host: '127.0.0.1', port: 5432, database: 'postgres', schema: 'public' }), fc.constant({ host: '10.0.0.1', database: 'x' }), generic);
  if (app === 'monitoring')
    return fc.oneof(
      fc.constant({ url: 'http://127.0.0.1:1' }),
      ...(env.echo ? [fc.constant({ url: env.echo.prometheus }), fc.constant({ url: env.echo.missing })] : []),
      fc.constant({ message_root: 'Message' }),
      fc.constant({ message_root: '__proto__.x' }),
      fc.constant({ load_json: ['message', '__proto__'] }),
      fc.constant({ convert_data: { title: '{{ labels.alertname }}', description: '{{ __proto__.constructor.name }}', resource: { name: '{{ constructor.prototype }}' } } }),
      fc.record({ convert_data: fc.dictionary(fc.constantFrom('title', 'severity', 'event_key', 'resource', '__proto__'), fc.constantFrom('{{ a.b }}', '{{ __proto__ }}', '{{constructor.prototype.x}}', '{{', 'x')) }),
      generic,
    );
  return generic;
}

// ------------------------------------------------------------------------------------------ cases

type Transport = 'json' | 'text-plain' | 'no-type' | 'latin1' | 'empty' | 'invalid-json' | 'root-array' | 'root-null' | 'root-string' | 'bom' | 'get' | 'put' | 'delete' | 'form';
const TRANSPORTS: Transport[] = ['text-plain', 'no-type', 'latin1', 'empty', 'invalid-json', 'root-array', 'root-null', 'root-string', 'bom', 'get', 'put', 'delete', 'form'];
const transportArb = fc.oneof({ weight: 25, arbitrary: fc.constant<Transport>('json') }, { weight: 2, arbitrary: fc.constantFrom(...TRANSPORTS) });
// A third of the cases are as the schema says; the others carry one or two hostile mutations.
const mutationsArb = fc.oneof({ weight: 3, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 6, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 2 }) });

function applyTransport(c: Case, tr: Transport): Case {
  const text = (v: unknown) => Raw.text(typeof v === 'string' ? v : 'x');
  switch (tr) {
    case 'json':
      return c;
    case 'text-plain':
      return { ...c, contentType: 'text/plain', notes: [...c.notes, 'Content-Type text/plain'] };
    case 'form':
      return { ...c, contentType: 'application/x-www-form-urlencoded', body: Raw.text('a=1&__proto__[x]=1'), notes: [...c.notes, 'a form body'] };
    case 'no-type':
      return { ...c, contentType: undefined, notes: [...c.notes, 'no Content-Type'] };
    case 'latin1':
      return { ...c, contentType: 'application/json; charset=latin1', notes: [...c.notes, 'charset latin1'] };
    case 'empty':
      return { ...c, body: undefined, notes: [...c.notes, 'no body'] };
    case 'invalid-json':
      return { ...c, body: Raw.text('{"a": [1, 2'), notes: [...c.notes, 'truncated JSON'] };
    case 'root-array':
      return { ...c, body: [c.body], notes: [...c.notes, 'body is an array'] };
    case 'root-null':
      return { ...c, body: null, notes: [...c.notes, 'body is null'] };
    case 'root-string':
      return { ...c, body: text('x'), notes: [...c.notes, 'body is a bare word'] };
    case 'bom':
      return { ...c, body: [new Raw(Buffer.from([0xef, 0xbb, 0xbf]), 'BOM'), c.body], notes: [...c.notes, 'a BOM before the body'] };
    case 'get':
    case 'put':
    case 'delete':
      return { ...c, method: tr.toUpperCase(), body: tr === 'get' ? undefined : c.body, notes: [...c.notes, `method ${tr.toUpperCase()}`] };
  }
}

const HOSTILE_SEGMENTS = ['__proto__', 'constructor', '..', '%2e%2e', '%00', '%ZZ', 'a'.repeat(5000), encodeURIComponent('\u202e😀'), '%2F', '', '%20', encodeURIComponent("' OR 1=1 --")];

function segmentArb(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: real.length ? 8 : 0, arbitrary: real.length ? fc.constantFrom(...real) : fc.constant('x') },
    { weight: 2, arbitrary: identifier },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
  );
}

/** The arbitrary of cases for a target. */
export function caseArb(t: Target, env: GenEnv): fc.Arbitrary<Case> {
  const { pools } = env;
  let body: fc.Arbitrary<unknown>;
  let pathArb: fc.Arbitrary<string> = fc.constant(t.path);
  let method: fc.Arbitrary<string> = fc.constant('POST');
  if (t.kind === 'operation') body = arbitraryOf(t.schema!, t.schema!, hintsFor(t, env));
  else if (t.kind === 'ingest') body = arbitraryOf(INGEST_SCHEMA, INGEST_SCHEMA, hintsFor(t, env));
  else if (t.kind === 'webhook') {
    body = payloadArb;
    const real = pools.webhookPaths;
    pathArb = fc.oneof(
      { weight: real.length ? 6 : 0, arbitrary: real.length ? fc.constantFrom(...real) : fc.constant('') },
      { weight: 3, arbitrary: fc.tuple(segmentArb(pools.ids('monitoring', 'webhook_id', false)), segmentArb(pools.ids('monitoring', 'access_key', false))).map(([id, key]) => `/monitoring/v1/webhook/${id}/${key}/events`) },
    ).map((p) => p || '/monitoring/v1/webhook/x/y/events');
    method = fc.oneof({ weight: 15, arbitrary: fc.constant('POST') }, { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH') });
  } else {
    body = fc.constant(undefined);
    pathArb = segmentArb(pools.downloadTokens).map((tok) => `${t.path}/${tok}`);
    method = fc.oneof({ weight: 15, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom('POST', 'HEAD', 'DELETE') });
  }
  const downloadAuth: fc.Arbitrary<Auth> = fc.oneof(
    { weight: 4, arbitrary: fc.constant<Auth>({ kind: 'none' }) },
    { weight: 2, arbitrary: fc.constant<Auth>({ kind: 'role', role: 'WORKSPACE_OWNER' }) },
    { weight: 1, arbitrary: fc.constant<Auth>({ kind: 'other-domain', role: 'WORKSPACE_OWNER' }) },
    { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_HEADERS).map<Auth>((header) => ({ kind: 'garbage', header })) },
  );
  return fc
    .record({
      auth: t.kind === 'download' ? downloadAuth : authArb(t),
      body,
      path: pathArb,
      method,
      mutations: t.kind === 'download' ? fc.constant<Mutation[]>([]) : mutationsArb,
      transport: t.kind === 'download' ? fc.constant<Transport>('json') : transportArb,
    })
    .map(({ auth, body: base, path: p, method: m, mutations, transport }) => {
      let b = clone(base);
      const notes: string[] = [];
      for (const mu of mutations) {
        const r = applyMutation(b, mu, t.fields);
        b = r.body;
        notes.push(`${mu.kind}: ${r.note}`);
      }
      const c: Case = { target: t, method: m, path: p, contentType: b === undefined ? undefined : 'application/json', auth, body: b, notes };
      return applyTransport(c, transport);
    });
}

/** A body with only the required properties (and `domain_id`), as the generator makes them, for the corpus. */
export function minimalBody(t: Target, env: GenEnv): Record<string, unknown> {
  const schema = t.schema ?? {};
  const [full] = fc.sample(arbitraryOf(schema, schema, hintsFor(t, env)), { seed: 1, numRuns: 1 }) as Record<string, unknown>[];
  const out: Record<string, unknown> = {};
  if (schema.properties?.domain_id) out.domain_id = DOMAIN;
  for (const k of schema.required ?? []) if (full && typeof full === 'object' && k in full) out[k] = k === 'domain_id' ? DOMAIN : full[k];
  return out;
}

/** What a task action posts to opsflow's ingest route (apps/opsflow/src/event/ingest.ts `recordSchema`), as JSON Schema. */
const INGEST_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    event_key: { type: 'string', minLength: 1, maxLength: 255 },
    domain_id: { type: 'string', minLength: 1, maxLength: 255 },
    workspace_id: { type: 'string', minLength: 1, maxLength: 255 },
    project_id: { type: 'string', minLength: 1, maxLength: 255 },
    task_id: { type: 'string', minLength: 1, maxLength: 255 },
    event_type: { enum: ['CREATED', 'UPDATED', 'CHANGE_STATUS', 'COMMENTED'] },
    name: { type: 'string', minLength: 1, maxLength: 255 },
    description: { type: 'string', maxLength: 10_000 },
    user_type: { enum: ['USER', 'APP'] },
    user_id: { type: 'string', minLength: 1, maxLength: 255 },
    created_at: { type: 'string' },
  },
  required: ['event_key', 'domain_id', 'project_id', 'task_id', 'event_type', 'name', 'user_id'],
  additionalProperties: false,
};
