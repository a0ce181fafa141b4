// The contract check (issue #29): the test setup (tools/test/answers) validates every answer a test
// receives against the OpenAPI document its app serves, with a real JSON Schema validator (Ajv, draft
// 2020-12, the dialect of OpenAPI 3.1), beside the zod check of responses.ts. The document's answer schema of each status
// (200, the declared error statuses, `default`) is compiled once per operation, on first use.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface Doc {
  paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: unknown }> }; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> } }>;
  components?: { schemas?: Record<string, unknown> };
}

export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction | null>();

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    // the components, under the document's own $ref paths (#/components/schemas/X)
    this.ajv.addSchema({ $id: 'doc', components: doc.components ?? {} });
  }

  private validator(path: string, status: number): ValidateFunction | null {
    const key = `${path} ${status}`;
    let v = this.validators.get(key);
    if (v !== undefined) return v;
    const responses = this.doc.paths?.[path]?.post?.responses ?? {};
    const schema = (responses[String(status)] ?? (status >= 500 && status !== 503 ? responses.default : undefined))?.content?.['application/json']?.schema;
    v = schema ? this.ajv.compile(rebase(schema) as object) : null;
    this.validators.set(key, v);
    return v;
  }

  /**
   * What is wrong with a request the server took (answered 200), by the document; undefined when it
   * validates. `body` is what the caller sent with its JSON names read as proto names (`x-json-name`).
   */
  requestProblem(path: string, body: unknown): string | undefined {
    const key = `${path} request`;
    let v = this.validators.get(key);
    if (v === undefined) {
      const schema = this.doc.paths?.[path]?.post?.requestBody?.content?.['application/json']?.schema;
      v = schema ? this.ajv.compile(rebase(schema) as object) : null;
      this.validators.set(key, v);
    }
    if (!v) return `${path}: the document declares no request body`;
    if (v(JSON.parse(JSON.stringify(body ?? null)))) return undefined;
    return `${path}: a request the server took does not validate against the OpenAPI document: ${describe(v)}`;
  }

  /** Whether the document has this operation. */
  covers(path: string): boolean {
    return Boolean(this.doc.paths?.[path]?.post);
  }

  /** What is wrong with one answer, by the document; undefined when it validates. */
  problem(path: string, status: number, body: unknown): string | undefined {
    if (!this.doc.paths?.[path]) return `${path}: not in the OpenAPI document`;
    const v = this.validator(path, status);
    if (!v) return `${path}: the document declares no ${status} answer`;
    if (v(JSON.parse(JSON.stringify(body ?? null)))) return undefined;
    return `${path}: a ${status} answer does not validate against the OpenAPI document: ${describe(v)}`;
  }
}

/** The first errors of a failed validation, as text. */
function describe(v: ValidateFunction): string {
  return (v.errors ?? [])
    .slice(0, 3)
    .map((x) => `${x.instancePath || '(root)'} ${x.message ?? ''}${x.params && 'additionalProperty' in x.params ? ` (${String(x.params.additionalProperty)})` : ''}`)
    .join('; ');
}

/** `#/components/...` references made to point into the schema registered as `doc`. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `doc${v}` : rebase(v);
  return out;
}
