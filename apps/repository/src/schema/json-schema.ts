import Ajv, { type AnySchema } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json';
import { ApiError, errors } from '@platform/errors';

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_06 = /^https?:\/\/json-schema\.org\/draft-06\/schema#?$/;
const DRAFT_2019 = /^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/;
const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

export function invalidSchema(key: string, reason: string): ApiError {
  return errors.invalidSchema(key, reason);
}

type Dialect = 'draft-06' | 'draft-07' | '2019-09' | '2020-12';
const instances = new Map<Dialect, Ajv>();

function dialectOf(declared: unknown, key: string): Dialect {
  if (declared === undefined || (typeof declared === 'string' && DRAFT_07.test(declared))) return 'draft-07';
  if (typeof declared === 'string' && DRAFT_06.test(declared)) return 'draft-06';
  if (typeof declared === 'string' && DRAFT_2019.test(declared)) return '2019-09';
  if (typeof declared === 'string' && DRAFT_2020.test(declared)) return '2020-12';
  throw invalidSchema(`${key}.$schema`, 'supported dialects are JSON Schema draft-06, draft-07, 2019-09 and 2020-12');
}

/** One Ajv per dialect (draft-07 when the schema declares none, as upstream checks), made on first use. */
function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    const options = { strict: false, allErrors: false, validateSchema: true, addUsedSchema: false } as const;
    ajv = dialect === '2019-09' ? new Ajv2019(options) : dialect === '2020-12' ? new Ajv2020(options) : new Ajv(options);
    if (dialect === 'draft-06') ajv.addMetaSchema(draft06);
    addFormats(ajv);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/**
 * A valid JSON Schema: it satisfies its dialect's meta-schema and compiles (every `$ref` resolves
 * inside the document: remote references are never fetched). Upstream checks with Draft7Validator.
 */
export function assertJsonSchema(schema: Record<string, unknown>, key = 'schema'): void {
  const ajv = ajvFor(dialectOf(schema.$schema, key));
  if (!ajv.validateSchema(schema as AnySchema)) {
    throw invalidSchema(key, ajv.errorsText(ajv.errors, { dataVar: key }));
  }
  try {
    ajv.compile(schema as AnySchema);
  } catch (e) {
    throw invalidSchema(key, (e as Error).message);
  } finally {
    // Ajv keeps every compiled schema; forget this one so checking schemas never grows memory.
    ajv.removeSchema(schema as AnySchema);
  }
}
