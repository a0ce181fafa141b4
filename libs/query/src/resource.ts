import { quoteIdent, quoteTable } from './sql';
import type { DatePrecision } from './time';

export type FieldType =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'datetime'
  | 'json'
  | 'string_array'
  | 'json_array';

export interface FieldSpec {
  /** SQL column of the table. */
  column: string;
  type: FieldType;
  /** The column is NOT NULL: sorts on it are emitted without NULLS FIRST/LAST so a plain btree index serves them. */
  notNull?: boolean;
  /** For a `string` field holding dates (`billed_month`): its precision. Analyze start/end/granularity use it. */
  dateFormat?: DatePrecision;
}

export interface ResourceSpec {
  /** SQL table name, e.g. `project_group` or `schema.table`. */
  table: string;
  /** API key -> column. A `json` field accepts dotted sub-keys: `tags.env` -> tags->'env'. */
  fields: Record<string, FieldSpec>;
  /** API key of the id, appended to every sort as tie-breaker. */
  idKey: string;
  /** API keys matched by `keyword`. */
  keywordKeys: string[];
  /** Default date field of analyze (granularity, start, end). */
  dateKey?: string;
  /** Default and cap of `page.limit` for list (default 1000; 0 = no default, no cap). */
  maxLimit?: number;
  /** The fields a `minimal` list answers. */
  minimalKeys?: string[];
}

export interface CompiledField {
  readonly key: string;
  readonly column: string; // quoted
  readonly type: FieldType;
  readonly notNull: boolean;
  readonly dateFormat?: DatePrecision;
}

export interface Resource {
  readonly spec: Readonly<ResourceSpec>;
  readonly table: string; // quoted
  readonly fields: ReadonlyMap<string, CompiledField>;
  readonly idKey: string;
  readonly keywordKeys: readonly string[];
  readonly dateKey?: string;
  readonly maxLimit: number;
  readonly minimalKeys?: readonly string[];
}

const FIELD_TYPES: readonly FieldType[] = [
  'string',
  'number',
  'integer',
  'boolean',
  'datetime',
  'json',
  'string_array',
  'json_array',
];

/** The field a (possibly dotted) key starts with: the longest declared prefix, and the rest as a JSON path. */
export function splitKey<F>(fields: ReadonlyMap<string, F>, key: string): { field: F; name: string; path: string[] } | null {
  if (typeof key !== 'string' || key.length === 0) return null;
  if (fields.has(key)) return { field: fields.get(key) as F, name: key, path: [] };
  const segs = key.split('.');
  if (segs.some((s) => s.length === 0)) return null;
  for (let i = segs.length - 1; i >= 1; i--) {
    const name = segs.slice(0, i).join('.');
    const f = fields.get(name);
    if (f !== undefined) return { field: f, name, path: segs.slice(i) };
  }
  return null;
}

/** Validates a resource spec once, at startup: a bad spec is a programming error (throws Error). */
export function defineResource(spec: ResourceSpec): Resource {
  if (!spec || typeof spec.table !== 'string' || !spec.table) throw new Error('defineResource: table is required');
  const fields = new Map<string, CompiledField>();
  for (const [key, f] of Object.entries(spec.fields ?? {})) {
    if (!key || key.split('.').some((s) => !s)) throw new Error(`defineResource(${spec.table}): bad key ${key}`);
    if (!FIELD_TYPES.includes(f.type)) throw new Error(`defineResource(${spec.table}): ${key} has bad type ${f.type}`);
    if (f.dateFormat && f.type !== 'string') throw new Error(`defineResource(${spec.table}): dateFormat needs a string field (${key})`);
    fields.set(key, {
      key,
      column: quoteIdent(f.column),
      type: f.type,
      notNull: Boolean(f.notNull) || key === spec.idKey,
      dateFormat: f.dateFormat,
    });
  }
  const must = (key: string, what: string) => {
    const s = splitKey(fields, key);
    if (!s || (s.path.length > 0 && s.field.type !== 'json' && s.field.type !== 'json_array')) {
      throw new Error(`defineResource(${spec.table}): ${what} ${key} is not a field`);
    }
    return s;
  };
  if (!fields.has(spec.idKey)) throw new Error(`defineResource(${spec.table}): idKey ${spec.idKey} is not a field`);
  for (const k of spec.keywordKeys ?? []) {
    const s = must(k, 'keyword key');
    if (s.path.length === 0 && !['string', 'string_array', 'json', 'json_array'].includes(s.field.type)) {
      throw new Error(`defineResource(${spec.table}): keyword key ${k} must be a string field`);
    }
  }
  if (spec.dateKey) {
    const s = must(spec.dateKey, 'dateKey');
    if (s.path.length > 0 || (s.field.type !== 'datetime' && s.field.type !== 'string')) {
      throw new Error(`defineResource(${spec.table}): dateKey must be a datetime or string field`);
    }
  }
  const maxLimit = spec.maxLimit ?? 1000;
  if (!Number.isInteger(maxLimit) || maxLimit < 0) throw new Error(`defineResource(${spec.table}): bad maxLimit`);
  return Object.freeze({
    spec: Object.freeze({ ...spec }),
    table: quoteTable(spec.table),
    fields,
    idKey: spec.idKey,
    keywordKeys: Object.freeze([...(spec.keywordKeys ?? [])]),
    dateKey: spec.dateKey,
    maxLimit,
    minimalKeys: spec.minimalKeys ? Object.freeze([...spec.minimalKeys]) : undefined,
  });
}
