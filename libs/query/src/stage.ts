import type { FieldType } from './resource';
import type { Condition, Granularity, ProjectOperand, SortItem } from './schemas';
import { Scope, type Col, type Ref } from './scope';
import type { DatePrecision } from './time';

/**
 * The aggregation pipeline's intermediate form: the stages (StageIR) that stat's `aggregate` and
 * analyze both compile to, and the State between two stages (the CTE alias, its named columns, its
 * order and group keys). Value helpers shared by group and project expressions are here too.
 */

export interface GroupKeyIR {
  name: string;
  key: string;
  dateFormat?: string | null;
  /** analyze's `date` key: the date field bucketed at a granularity. */
  bucket?: Granularity;
  errKey: string;
}
export interface GroupFieldIR {
  name: string;
  operator: string;
  key?: string | null;
  fields?: { key: string; name: string }[] | null;
  conditions?: Condition[] | null;
  errKey: string;
}
export interface ProjectFieldIR {
  name: string;
  key?: string | null;
  operator?: string | null;
  fields?: ProjectOperand[] | null;
  errKey: string;
}
export type StageIR =
  | { type: 'group'; keys: GroupKeyIR[]; fields: GroupFieldIR[]; errKey: string }
  | { type: 'unwind'; path: string; filter?: Condition[] | null; errKey: string }
  | { type: 'match'; filter?: Condition[] | null; filter_or?: Condition[] | null; errKey: string }
  | { type: 'project'; fields: ProjectFieldIR[]; excludeKeys: boolean; onlyKeys: boolean; errKey: string }
  | { type: 'sort'; sort: SortItem[]; errKey: string }
  | { type: 'limit' | 'skip'; n: number; errKey: string }
  | { type: 'count'; name: string; errKey: string };

export interface StCol {
  ident: string;
  kind: FieldType;
  notNull?: boolean;
  dateFormat?: DatePrecision;
}
export interface OrderCol {
  ident: string;
  desc: boolean;
  notNull?: boolean;
}
export interface State {
  alias: string;
  cols: Map<string, StCol>;
  order: OrderCol[] | null;
  groupKeys: string[];
  baseId?: string;
}

export const NUMERIC: readonly FieldType[] = ['number', 'integer'];
const UTC_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

export function scopeOf(st: State): Scope {
  const cols = new Map<string, Col>();
  for (const [name, c] of st.cols) {
    cols.set(name, { sql: `${st.alias}.${c.ident}`, kind: c.kind, notNull: c.notNull, dateFormat: c.dateFormat });
  }
  return new Scope(cols);
}

export function toNum(ref: Pick<Ref, 'sql' | 'kind'>): string {
  if (NUMERIC.includes(ref.kind)) return `(${ref.sql})::float8`;
  if (ref.kind === 'json' || ref.kind === 'json_array') {
    return `(CASE WHEN jsonb_typeof(${ref.sql}) = 'number' THEN (${ref.sql})::float8 END)`;
  }
  return 'NULL::float8';
}

export function toJson(ref: Pick<Ref, 'sql' | 'kind'>): string {
  if (ref.kind === 'json' || ref.kind === 'json_array') return ref.sql;
  if (ref.kind === 'datetime') return `to_jsonb(to_char(${ref.sql} AT TIME ZONE 'UTC', ${UTC_ISO}))`;
  return `to_jsonb(${ref.sql})`;
}

