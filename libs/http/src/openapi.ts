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

function requestSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    return json;
  } catch {
    return { type: 'object' };
  }
}

/** OpenAPI 3.1 of one app, generated from its operation table (the zod request schemas). */
export function buildOpenApi(service: string, operations: Operation<any>[], version = process.env.PLATFORM_VERSION || '1.0.0') {
  const paths: Record<string, unknown> = {};
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
        requestBody: { required: true, content: { 'application/json': { schema: requestSchema(op.schema) } } },
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
      schemas: { Error: ERROR_SCHEMA },
    },
  };
}

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A self-contained page (no external assets) that lists the operations with their request schemas. */
export function docsPage(service: string, doc: ReturnType<typeof buildOpenApi>): string {
  const rows = Object.entries(doc.paths)
    .map(([path, item]) => {
      const post = (item as { post: Record<string, any> }).post;
      const access = post['x-role-types'] ? `${post['x-permission']} — ${(post['x-role-types'] as string[]).join(', ')}` : 'no token';
      const schema = JSON.stringify(post.requestBody.content['application/json'].schema, null, 2);
      return `<details><summary><code>POST ${escape(path)}</code> <span>${escape(post.summary)}</span> <em>${escape(access)}</em></summary><pre>${escape(schema)}</pre></details>`;
    })
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(service)} API</title>
<style>body{font:14px system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em}summary{cursor:pointer;padding:.4em 0}
summary span{color:#555;margin-left:.6em}summary em{color:#888;margin-left:.6em;font-size:12px}pre{background:#f6f8fa;padding:1em;overflow:auto}</style>
</head><body><h1>${escape(service)} API</h1><p>OpenAPI 3.1: <a href="openapi.json">openapi.json</a>. Send <code>Authorization: Bearer &lt;access_token&gt;</code> and a JSON body.</p>
${rows}</body></html>`;
}
