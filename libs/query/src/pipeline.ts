import { UNSAFE_KEYS } from '@platform/core';
import { errors } from '@platform/errors';
import { orderItem, sortExprs } from './base';
import { compileWhere } from './filter';
import { groupFieldExpr, groupKeyExpr } from './group';
import { projectExpr } from './project';
import type { FieldType, Resource } from './resource';
import type { Scope } from './scope';
import type { Ctx } from './sql';
import { NUMERIC, scopeOf, type OrderCol, type StageIR, type State, type StCol } from './stage';

/**
 * The aggregation pipeline as SQL: each stage one CTE over the previous one (`s0` the filtered rows of
 * the resource's table, then `s1`, `s2`...), each stage compiled by a step of its own below; then the
 * final SELECT and ORDER BY over the last.
 */

export interface Pipeline {
  ctes: string[];
  state: State;
}

type Stage<T extends StageIR['type']> = Extract<StageIR, { type: T }>;

/** The CTEs built so far and the state of the last; `push` adds a stage's SELECT as the next CTE. */
class PipelineBuilder {
  readonly ctes: string[];
  st: State;
  private n = 0;

  constructor(
    resource: Resource,
    where: string,
    readonly ctx: Ctx,
    readonly now: Date,
  ) {
    this.ctes = [`s0 AS (SELECT * FROM ${resource.table} AS t WHERE ${where})`];
    const cols = new Map<string, StCol>();
    for (const f of resource.fields.values()) cols.set(f.key, { ident: f.column, kind: f.type, notNull: f.notNull, dateFormat: f.dateFormat });
    this.st = { alias: 's0', cols, order: null, groupKeys: [], baseId: resource.fields.get(resource.idKey)?.column };
  }

  push(sql: string, next: Omit<State, 'alias'>) {
    this.n += 1;
    const alias = `s${this.n}`;
    this.ctes.push(`${alias} AS (${sql})`);
    this.st = { ...next, alias };
  }

  /** The previous stage's rows where `where` holds. */
  filter(where: string) {
    this.push(`SELECT ${this.st.alias}.* FROM ${this.st.alias} WHERE ${where}`, this.st);
  }
}

/** Stages as CTEs over `s0`, the filtered rows of the resource's table. */
export function compilePipeline(resource: Resource, where: string, stages: StageIR[], ctx: Ctx, now: Date): Pipeline {
  const b = new PipelineBuilder(resource, where, ctx, now);
  for (const stage of stages) {
    const scope = scopeOf(b.st);
    switch (stage.type) {
      case 'match':
        matchStep(b, stage, scope);
        break;
      case 'unwind':
        unwindStep(b, stage, scope);
        break;
      case 'group':
        groupStep(b, stage, scope);
        break;
      case 'project':
        projectStep(b, stage, scope);
        break;
      case 'sort':
        sortStep(b, stage, scope);
        break;
      case 'limit':
      case 'skip':
        windowStep(b, stage);
        break;
      case 'count':
        countStep(b, stage);
        break;
    }
  }
  return { ctes: b.ctes, state: b.st };
}

function matchStep(b: PipelineBuilder, stage: Stage<'match'>, scope: Scope) {
  b.filter(compileWhere({ filter: stage.filter, filter_or: stage.filter_or }, [], scope, [], b.ctx, stage.errKey, b.now));
}

/** The SQL set-returning function that yields the elements of `ref` (null: a scalar, kept as it is). */
function unwindSource(ref: { sql: string; kind: FieldType }): { fn: string; kind: FieldType } | null {
  if (ref.kind === 'string_array') return { fn: `unnest(${ref.sql})`, kind: 'string' };
  if (ref.kind === 'json' || ref.kind === 'json_array') {
    return {
      fn: `jsonb_array_elements(CASE WHEN jsonb_typeof(${ref.sql}) = 'array' THEN ${ref.sql} WHEN ${ref.sql} IS NULL OR ${ref.sql} = 'null'::jsonb THEN NULL ELSE jsonb_build_array(${ref.sql}) END)`,
      kind: 'json',
    };
  }
  return null;
}

/** One row per element of the path (a scalar: the rows that have it), then the stage's own filter. */
function unwindStep(b: PipelineBuilder, stage: Stage<'unwind'>, scope: Scope) {
  const { ctx, st } = b;
  const ref = scope.resolve(stage.path, `${stage.errKey}.path`, ctx);
  const ident = ctx.uid('u');
  const u = ctx.uid('l');
  const source = unwindSource(ref);
  if (source) {
    const next = new Map(st.cols);
    next.set(stage.path, { ident, kind: source.kind });
    b.push(`SELECT ${st.alias}.*, ${u}.v AS ${ident} FROM ${st.alias} CROSS JOIN LATERAL ${source.fn} AS ${u}(v)`, { ...st, cols: next });
  } else {
    b.filter(`${ref.sql} IS NOT NULL`);
  }
  if (stage.filter && stage.filter.length) {
    b.filter(compileWhere({ filter: stage.filter }, [], scopeOf(b.st), [], ctx, stage.errKey, b.now));
  }
}

function groupStep(b: PipelineBuilder, stage: Stage<'group'>, scope: Scope) {
  const { ctx, st } = b;
  if (stage.keys.length === 0 && stage.fields.length === 0) throw errors.requiredParameter(`${stage.errKey}.keys`);
  const sel: string[] = [];
  const next = new Map<string, StCol>();
  const add = (name: string, errKey: string, expr: () => { sql: string; kind: FieldType }, prefix: string) => {
    if (next.has(name)) throw errors.invalidParameter(`${errKey}.name`, `duplicate name "${name}"`);
    const e = expr();
    const ident = ctx.uid(prefix);
    sel.push(`${e.sql} AS ${ident}`);
    next.set(name, { ident, kind: e.kind });
  };
  for (const k of stage.keys) add(k.name, k.errKey, () => groupKeyExpr(k, scope, ctx), 'g');
  for (const f of stage.fields) add(f.name, f.errKey, () => groupFieldExpr(f, st, scope, ctx, b.now), 'f');
  const by = stage.keys.length ? ` GROUP BY ${stage.keys.map((_, i) => String(i + 1)).join(', ')}` : ' HAVING count(*) > 0';
  b.push(`SELECT ${sel.join(', ')} FROM ${st.alias}${by}`, { cols: next, order: null, groupKeys: stage.keys.map((k) => k.name), baseId: undefined });
}

/** The group keys (unless excluded), the projected fields, and the sort columns carried through. */
function projectStep(b: PipelineBuilder, stage: Stage<'project'>, scope: Scope) {
  const { ctx, st } = b;
  if (stage.fields.length === 0) throw errors.requiredParameter(`${stage.errKey}.fields`);
  const sel: string[] = [];
  const next = new Map<string, StCol>();
  if (!stage.excludeKeys) {
    for (const name of st.groupKeys) {
      const c = st.cols.get(name);
      if (c) {
        sel.push(`${st.alias}.${c.ident} AS ${c.ident}`);
        next.set(name, c);
      }
    }
  }
  for (const f of stage.fields) {
    const e = projectExpr(f, stage.onlyKeys, scope, ctx);
    const ident = ctx.uid('p');
    sel.push(`${e.sql} AS ${ident}`);
    next.set(f.name, { ident, kind: e.kind });
  }
  for (const o of st.order ?? []) sel.push(`${st.alias}.${o.ident} AS ${o.ident}`);
  b.push(`SELECT ${sel.join(', ')} FROM ${st.alias}`, {
    cols: next,
    order: st.order,
    groupKeys: stage.excludeKeys ? [] : st.groupKeys.filter((k) => next.has(k)),
    baseId: undefined,
  });
}

/** The sort keys as columns of their own (the order later stages keep), the base id last. */
function sortStep(b: PipelineBuilder, stage: Stage<'sort'>, scope: Scope) {
  const { ctx, st } = b;
  if (stage.sort.length === 0) return;
  const sel: string[] = [`${st.alias}.*`];
  const order: OrderCol[] = stage.sort.flatMap((s, i) => {
    const r = scope.resolve(s.key, `${stage.errKey}[${i}].key`, ctx);
    return sortExprs(r).map((e) => {
      const ident = ctx.uid('o');
      sel.push(`${e.sql} AS ${ident}`);
      return { ident, desc: Boolean(s.desc), notNull: e.notNull };
    });
  });
  if (st.baseId) order.push({ ident: st.baseId, desc: false, notNull: true });
  b.push(`SELECT ${sel.join(', ')} FROM ${st.alias}`, { ...st, order });
}

/** limit / skip, in the order the state has. */
function windowStep(b: PipelineBuilder, stage: Stage<'limit' | 'skip'>) {
  const { ctx, st } = b;
  if (!Number.isInteger(stage.n) || stage.n < (stage.type === 'limit' ? 1 : 0)) {
    throw errors.invalidParameter(stage.errKey, `${stage.type} must be ${stage.type === 'limit' ? 'a positive' : 'a non-negative'} integer`);
  }
  const clause = stage.type === 'limit' ? 'LIMIT' : 'OFFSET';
  b.push(`SELECT ${st.alias}.* FROM ${st.alias}${finalOrder(st)} ${clause} ${ctx.add(stage.n, 'int8')}`, st);
}

function countStep(b: PipelineBuilder, stage: Stage<'count'>) {
  const ident = b.ctx.uid('c');
  b.push(`SELECT count(*)::float8 AS ${ident} FROM ${b.st.alias} HAVING count(*) > 0`, {
    cols: new Map([[stage.name, { ident, kind: 'number' as FieldType }]]),
    order: null,
    groupKeys: [],
    baseId: undefined,
  });
}

/** The final SELECT list of a pipeline and how to turn its rows into answer objects. */
export function finalSelect(st: State): { list: string; toObject: (row: Record<string, unknown>) => Record<string, unknown> } {
  const entries = [...st.cols.entries()];
  const list = entries.map(([, c], i) => {
    const v = `${st.alias}.${c.ident}`;
    return `${NUMERIC.includes(c.kind) ? `(${v})::float8` : v} AS __qv${i}`;
  });
  const order = entries
    .map(([name], i) => ({ name, i, dotted: name.includes('.') }))
    .sort((a, b) => Number(a.dotted) - Number(b.dotted) || a.name.length - b.name.length);
  return {
    list: list.join(', '),
    toObject(row) {
      const out: Record<string, unknown> = {};
      for (const { name, i, dotted } of order) {
        const v = row[`__qv${i}`];
        if (!dotted) out[name] = v;
        else setPath(out, name.split('.'), v);
      }
      return out;
    },
  };
}

function setPath(obj: Record<string, unknown>, segs: string[], v: unknown): void {
  if (segs.some((s) => UNSAFE_KEYS.has(s))) return; // names are checked by KeySchema; never a path into a prototype
  let cur = obj;
  for (const s of segs.slice(0, -1)) {
    const next = Object.hasOwn(cur, s) ? cur[s] : undefined;
    cur[s] = next && typeof next === 'object' && !Array.isArray(next) && !(next instanceof Date) ? { ...(next as object) } : {};
    cur = cur[s] as Record<string, unknown>;
  }
  cur[segs[segs.length - 1]] = v;
}

export function finalOrder(st: State): string {
  if (!st.order) return st.baseId ? ` ORDER BY ${st.alias}.${st.baseId}` : '';
  return ` ORDER BY ${st.order.map((o) => orderItem({ sql: `${st.alias}.${o.ident}`, notNull: o.notNull }, o.desc)).join(', ')}`;
}
