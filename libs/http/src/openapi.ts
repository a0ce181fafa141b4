import { z } from 'zod';
import type { Operation } from './operation';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'status'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
    },
  },
};

/**
 * The JSON Schema of a request. A recursive schema comes out of zod with its own `$defs` and
 * `#/$defs/<name>` references, which mean nothing inside an OpenAPI document: they move to the
 * document's `components.schemas` (`defs`, shared by every operation; the same name with another
 * content gets a suffix) and the references follow them.
 */
function requestSchema(schema: z.ZodType, defs: Record<string, unknown>): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
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

/** OpenAPI 3.1 of one app, generated from its operation table (the zod request schemas). */
export function buildOpenApi(service: string, operations: Operation<any>[], version = process.env.PLATFORM_VERSION || '1.0.0') {
  const paths: Record<string, unknown> = {};
  const defs: Record<string, { text: string; schema: unknown }> = {};
  for (const op of [...operations].sort((a, b) => a.path.localeCompare(b.path))) {
    const [, , , resource, verb] = op.path.split('/');
    paths[op.path] = {
      post: {
        operationId: op.path.slice(1).replace(/[/-]/g, '_'),
        summary: op.summary ?? `${resource} ${verb}`,
        tags: [resource],
        ...(op.access === 'public'
          ? { security: [] }
          : { 'x-permission': op.access.permission, 'x-role-types': op.access.roles }),
        requestBody: { required: true, content: { 'application/json': { schema: requestSchema(op.schema, defs) } } },
        responses: {
          '200': { description: 'The result (Empty is {})', content: { 'application/json': { schema: { type: 'object' } } } },
          default: { description: 'Every failure', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: `${service} API`, version, description: `Operations of the ${service} module. Every operation is POST with a JSON body.` },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: ERROR_SCHEMA, ...Object.fromEntries(Object.entries(defs).map(([name, d]) => [name, d.schema])) },
    },
  };
}
