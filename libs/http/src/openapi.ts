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
