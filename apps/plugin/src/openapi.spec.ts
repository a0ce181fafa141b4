import request from 'supertest';
import { createTestPlugin } from './test-support';

type Schema = { $ref?: string; description?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; additionalProperties?: unknown };

/** Every property of a schema, at any depth (through items and $refs to the document's components), without a description. */
function undescribed(schema: Schema, components: Record<string, Schema>, where: string, seen = new Set<string>()): string[] {
  const out: string[] = [];
  const follow = (s: Schema): Schema => {
    const ref = s.$ref?.replace('#/components/schemas/', '');
    if (!ref || seen.has(ref) || ref === 'Query' || ref === 'ErrorEnvelope') return ref ? {} : s;
    seen.add(ref);
    return components[ref] ?? {};
  };
  const node = follow(schema);
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    if (!v.description && !(v.$ref && components[v.$ref.replace('#/components/schemas/', '')]?.description)) out.push(`${where}.${k}`);
    out.push(...undescribed(v, components, `${where}.${k}`, seen));
    if (v.items) out.push(...undescribed(v.items, components, `${where}.${k}[]`, seen));
    for (const alt of v.anyOf ?? []) out.push(...undescribed(alt, components, `${where}.${k}`, seen));
  }
  return out;
}

describe('plugin OpenAPI document', () => {
  let t: Awaited<ReturnType<typeof createTestPlugin>>;
  beforeAll(async () => {
    t = await createTestPlugin();
  });
  afterAll(() => t.close());

  it('describes every operation in a sentence and every field of every request and answer', async () => {
    const doc = (await request(t.app).get('/plugin/openapi.json')).body;
    const components = doc.components.schemas as Record<string, Schema>;
    const paths = Object.keys(doc.paths).sort();
    expect(paths).toEqual([
      '/plugin/v1/plugin/get-plugin-endpoint',
      '/plugin/v1/supervisor/deregister',
      '/plugin/v1/supervisor/get',
      '/plugin/v1/supervisor/list',
      '/plugin/v1/supervisor/list-plugins',
      '/plugin/v1/supervisor/publish',
    ]);
    const missing: string[] = [];
    for (const path of paths) {
      const op = doc.paths[path].post;
      expect([path, op.summary]).toEqual([path, expect.stringMatching(/^[A-Z].* .*\.$/)]);
      expect([path, op['x-role-types']]).toEqual([path, ['DOMAIN_ADMIN']]);
      missing.push(...undescribed(op.requestBody.content['application/json'].schema, components, `${path} request`));
      missing.push(...undescribed(op.responses['200'].content['application/json'].schema, components, `${path} answer`));
    }
    expect(missing).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/secret_digest/);
  });
});
