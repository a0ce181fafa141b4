import { z } from 'zod';
import type { Operation } from './operation';
import { operationDescription, tagDescription } from './openapi-text';
import { jsonName, ZERO_ENUM } from './proto3';
import { operationErrors } from './responses';

const ERROR_REF = { $ref: '#/components/schemas/ErrorEnvelope' };
const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'status'],
      additionalProperties: false,
      properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
    },
  },
};
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request', 401: 'No valid token', 403: 'Not allowed', 404: 'Not found', 409: 'Conflict', 412: 'Precondition failed',
  413: 'Body too large', 415: 'Not JSON', 422: 'Unprocessable', 429: 'Too many requests', 502: 'A plugin or upstream failed', 503: 'A dependency is unavailable; retry later', 504: 'Timed out',
};

/** The error answers of an operation: per status, the envelope with the codes it can give. */
function errorResponses(op: Operation<any>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, codes] of Object.entries(operationErrors(op)).sort(([a], [b]) => Number(a) - Number(b))) {
    out[status] = {
      description: `${STATUS_TEXT[Number(status)] ?? 'Error'}: ${codes.join(', ')}`,
      content: {
        'application/json': {
          schema: { allOf: [ERROR_REF, { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes }, status: { const: Number(status) } } } } }] },
        },
      },
    };
  }
  out.default = { description: 'An unexpected failure (500 ERROR_UNKNOWN)', content: { 'application/json': { schema: ERROR_REF } } };
  return out;
}

/**
 * A schema that reads several forms into one (a query's `sort`: a list, or core v1's Sort message) says
 * what it takes in its `x-input` metadata: the request document shows those forms.
 */
function inputForms(ctx: { jsonSchema: Record<string, unknown> }) {
  const forms = ctx.jsonSchema['x-input'];
  if (!forms || typeof forms !== 'object') return;
  for (const k of Object.keys(ctx.jsonSchema)) if (k !== 'description') delete ctx.jsonSchema[k];
  Object.assign(ctx.jsonSchema, forms);
}

/**
 * The JSON Schema of a request. A recursive schema comes out of zod with its own `$defs` and
 * `#/$defs/<name>` references, which mean nothing inside an OpenAPI document: they move to the
 * document's `components.schemas` (`defs`, shared by every operation; the same name with another
 * content gets a suffix) and the references follow them.
 */
function requestSchema(schema: z.ZodType, defs: Record<string, unknown>, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: io === 'input' ? inputForms : undefined }) as Record<string, unknown>;
    json = rest;
  } catch {
    return { type: 'object' };
  }
  const { $defs, ...body } = json as { $defs?: Record<string, unknown> };
  if (!$defs) return body;
  const names = new Map<string, string>();
  for (const [key, def] of Object.entries($defs)) {
    const text = JSON.stringify(def);
    let name = key.replace(/[^A-Za-z0-9._-]/g, '_');
    for (let n = 2; Object.hasOwn(defs, name) && (defs[name] as { text: string }).text !== text; n++) name = `${key}_${n}`;
    names.set(key, name);
  }
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (!v || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const m = k === '$ref' && typeof x === 'string' ? /^#\/\$defs\/(.+)$/.exec(x) : null;
      out[k] = m && names.has(m[1]) ? `#/components/schemas/${names.get(m[1])}` : rewrite(x);
    }
    return out;
  };
  for (const [key, def] of Object.entries($defs)) defs[names.get(key)!] = { text: JSON.stringify(def), schema: rewrite(def) };
  return rewrite(body) as Record<string, unknown>;
}

type Defs = Record<string, { text: string; schema: unknown }>;

const refName = (v: unknown) => {
  const ref = (v as { $ref?: unknown } | null)?.$ref;
  return typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? ref.slice('#/components/schemas/'.length) : undefined;
};

/** Whether a request may cut its answer to some fields: it takes `only`, or a `query` with `only` or `minimal`. */
function cutByOnly(input: Record<string, unknown>, defs: Defs): boolean {
  const props = (s: unknown) => {
    const name = refName(s);
    const schema = (name ? defs[name]?.schema : s) as { properties?: Record<string, unknown> } | undefined;
    return schema?.properties ?? {};
  };
  const top = props(input);
  if ('only' in top) return true;
  const query = props(top.query);
  return 'only' in query || 'minimal' in query;
}

/**
 * Takes `required` out of every object in the given answers, the components they reference included:
 * a get or list answer with `only` or `query.minimal` holds only some fields, so a document that marks
 * them required would not validate what the server answers (issue #29). A list's envelope stays
 * required. Each field's presence without `only` is said in the component's description instead.
 */
function withoutRequired(answers: unknown[], defs: Defs) {
  const strip = (o: Record<string, unknown>) => {
    if (Array.isArray(o.required) && o.properties && o.type === 'object') {
      delete o.required;
      if (typeof o.description === 'string' && !o.description.includes('`only`')) o.description += ' (every field is answered unless `only` or `minimal` cut the answer)';
    }
  };
  const visit = (v: unknown) => eachObject([v], defs, strip);
  for (const answer of answers) {
    // a list's envelope (`results`, `total_count`) is whole; its items are what `only` cuts
    const name = refName(answer);
    const top = (name ? defs[name]?.schema : answer) as { properties?: Record<string, unknown> } | undefined;
    const results = top?.properties?.results;
    if (results && top?.properties && 'total_count' in top.properties) visit((results as { items?: unknown }).items);
    else visit(answer);
  }
}

/** What a proto3 client sends for an unset field of this schema, besides `null` (docs/decisions/api.md). */
function unsetForms(p: Record<string, unknown>): Record<string, unknown>[] {
  const forms: Record<string, unknown>[] = [{ type: 'null' }];
  const type = p.type;
  if (Array.isArray(p.enum) || p.const !== undefined) forms.push({ type: 'string', pattern: ZERO_ENUM.source }, { const: '' });
  else if (type === 'string') forms.push({ const: '' });
  else if (type === 'number' || type === 'integer') forms.push({ const: 0 });
  else if (type === 'boolean') forms.push({ const: false });
  else if (type === 'array') forms.push({ type: 'array', maxItems: 0, items: {} });
  else if (type === 'object' || p.$ref) forms.push({ type: 'object', maxProperties: 0 });
  else if (Array.isArray(p.anyOf)) forms.push({ const: '' }, { const: 0 }, { const: false }, { type: 'array', maxItems: 0, items: {} }, { type: 'object', maxProperties: 0 });
  return forms;
}

/**
 * Requests as the servers take them (issue #29): every optional field of a request object also accepts
 * what a proto3 client sends for an unset field (`null`, `""`, `0`, `false`, `[]`, `{}`, an enum's zero
 * name); a field whose protobuf JSON name differs says it in `x-json-name` (either spelling is taken;
 * the property is the proto name); a query object's one-letter names (`x-aliases`, `{k, v, o}` for
 * `{key, value, operator}`) are properties too, either of a pair satisfying a required one.
 */
function acceptProto3(requests: unknown[], defs: Defs) {
  eachObject(requests, defs, (o) => {
    const props = o.properties as Record<string, Record<string, unknown>> | undefined;
    if (o.type !== 'object' || !props || typeof props !== 'object') return;
    const required = new Set(Array.isArray(o.required) ? (o.required as string[]) : []);
    for (const [key, p] of Object.entries(props)) {
      const json = jsonName(key);
      const named = json !== key ? { 'x-json-name': json } : {};
      if (required.has(key)) {
        if (json !== key) props[key] = { ...p, ...named };
        continue;
      }
      const { description, ...rest } = p;
      props[key] = { ...(description !== undefined ? { description } : {}), anyOf: [rest, ...unsetForms(rest)], ...named };
    }
    const aliases = o['x-aliases'] as Record<string, string> | undefined;
    if (aliases && typeof aliases === 'object') {
      const either: unknown[] = [];
      for (const [short, long] of Object.entries(aliases)) {
        if (!props[long] || props[short]) continue;
        props[short] = { ...props[long], description: `Short for \`${long}\`.` };
        if (required.has(long)) {
          required.delete(long);
          either.push({ anyOf: [{ required: [long] }, { required: [short] }] });
        }
      }
      if (Array.isArray(o.required)) {
        if (required.size) o.required = [...required];
        else delete o.required;
      }
      if (either.length) o.allOf = [...((o.allOf as unknown[]) ?? []), ...either];
    }
  });
}

/**
 * Calls `fn` on every object of the given schemas, once each, the components they reference included
 * (before walking into what `fn` left there).
 */
function eachObject(roots: unknown[], defs: Defs, fn: (o: Record<string, unknown>) => void) {
  const seen = new Set<unknown>();
  const visit = (v: unknown) => {
    if (!v || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) return v.forEach(visit);
    const o = v as Record<string, unknown>;
    const name = refName(o);
    if (name && defs[name]) visit(defs[name].schema);
    fn(o);
    for (const x of Object.values(o)) visit(x);
  };
  roots.forEach(visit);
}

/** OpenAPI 3.1 of one app, generated from its operation table (the zod request schemas). */
export function buildOpenApi(service: string, operations: Operation<any>[], version = process.env.PLATFORM_VERSION || '1.0.0') {
  const paths: Record<string, unknown> = {};
  const defs: Defs = {};
  const partial: unknown[] = []; // the answers `only` / `minimal` may cut: their fields are optional
  const requests: unknown[] = []; // what proto3 clients send is accepted there
  for (const op of [...operations].sort((a, b) => a.path.localeCompare(b.path))) {
    const [, , , resource, verb] = op.path.split('/');
    const input = requestSchema(op.schema, defs);
    requests.push(input);
    const answer = op.response ? requestSchema(op.response, defs, 'output') : { type: 'object' };
    const cut = cutByOnly(input, defs);
    if (cut) partial.push(answer);
    paths[op.path] = {
      post: {
        operationId: op.path.slice(1).replace(/[/-]/g, '_'),
        summary: op.summary ?? `${resource} ${verb}`,
        description: operationDescription(op, cut),
        tags: [resource],
        ...(op.access === 'public'
          ? { security: [] }
          : { ...(op.access.permission && { 'x-permission': op.access.permission }), 'x-role-types': op.access.roles }),
        requestBody: { required: true, content: { 'application/json': { schema: input } } },
        responses: {
          '200': {
            description: 'The result (Empty is {})',
            content: { 'application/json': { schema: answer } },
          },
          ...errorResponses(op),
        },
      },
    };
  }
  withoutRequired(partial, defs);
  acceptProto3(requests, defs);
  const resources = [...new Set(operations.map((op) => op.path.split('/')[3]).filter(Boolean))].sort();
  return {
    openapi: '3.1.0',
    info: {
      title: `${service} API`,
      version,
      description: `Operations of the ${service} module. Every operation is POST with a JSON body; every failure answers the error envelope.`,
      contact: { name: 'Cloud Ops Platform maintainers' },
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: resources.map((name) => ({ name, description: tagDescription(service, name) })),
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { ErrorEnvelope: ERROR_SCHEMA, ...Object.fromEntries(Object.entries(defs).map(([name, d]) => [name, d.schema])) },
    },
  };
}

/**
 * The operations of an OpenAPI document whose 200 answer says nothing: no schema, or a bare
 * `{type: object}` (no `$ref`, properties, composition or items). Every operation must declare its answer.
 */
export function undocumentedAnswers(doc: { paths?: Record<string, unknown> }): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const schema = (item as { post?: { responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> } }).post?.responses?.['200']
      ?.content?.['application/json']?.schema;
    const nonEmpty = (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length > 0;
    const says = schema && (['$ref', 'allOf', 'anyOf', 'oneOf', 'items'].some((k) => k in schema) || nonEmpty(schema.properties) || nonEmpty(schema.additionalProperties));
    if (!says) out.push(path);
  }
  return out;
}

/**
 * What a reader of an OpenAPI document would miss: an operation without a description, a tag the
 * document does not define, no `info.contact` or `info.license` (spectral's `operation-description`,
 * `operation-tag-defined`, `info-contact`; Redocly's `info-license`).
 */
export function undescribed(doc: { info?: { contact?: unknown; license?: unknown }; tags?: { name: string; description?: string }[]; paths?: Record<string, unknown> }): string[] {
  const out: string[] = [];
  if (!doc.info?.contact) out.push('info: no contact');
  if (!doc.info?.license) out.push('info: no license');
  const tags = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
  for (const [name, d] of tags) if (!d) out.push(`tag ${name}: no description`);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const post = (item as { post?: { description?: string; tags?: string[] } }).post;
    if (!post?.description?.trim()) out.push(`${path}: no description`);
    for (const t of post?.tags ?? []) if (!tags.has(t)) out.push(`${path}: tag ${t} is not defined`);
  }
  return out;
}
