import { errors } from '@platform/errors';
import { baseScope, execute, type SqlRunner } from './base';
import { compileWhere } from './filter';
import type { CompileOptions } from './list';
import type { Resource } from './resource';
import { QUERY_LIMITS, type AnalyzeQuery, type Condition, type TimeSeriesAnalyzeQuery } from './schemas';
import { Ctx, type CompiledSql } from './sql';
import { GROUP_OPERATORS } from './group';
import { compilePipeline, finalOrder, finalSelect } from './pipeline';
import type { GroupFieldIR, GroupKeyIR, StageIR } from './stage';
import { formatDate, parsePeriodBound } from './time';

export interface CompiledAnalyze extends CompiledSql {
  limit: number;
  toObject: (row: Record<string, unknown>) => Record<string, unknown>;
}

const TOTAL_OPS = ['sum', 'average', 'max', 'min', 'count'];

/**
 * analyze (upstream MongoModel.analyze): filter -> unwind -> group -> select -> field_group -> sort -> page, with the date key
 * of a time series (`granularity`) and `start` <= date <= `end` (inclusive at end's precision).
 */
export function compileAnalyze(
  resource: Resource,
  query: AnalyzeQuery | TimeSeriesAnalyzeQuery,
  scopeConds: readonly Condition[],
  opts: CompileOptions = {},
): CompiledAnalyze {
  const prefix = opts.prefix ?? 'query';
  const now = opts.now ?? new Date();
  const ctx = new Ctx();
  if (!query || !query.fields || typeof query.fields !== 'object') throw errors.requiredParameter(`${prefix}.fields`);
  const ts = query as TimeSeriesAnalyzeQuery;
  const fieldGroup = query.field_group ?? [];
  for (const k of fieldGroup) {
    if (k.startsWith('_total_')) {
      throw errors.invalidParameter(`${prefix}.field_group`, 'Field group keys cannot contain _total_ characters.');
    }
  }

  // Time series: the date field, its bounds and its bucket.
  const extra: Condition[] = [];
  const dateKey = ts.date_field ?? resource.dateKey;
  const needsDate = Boolean(ts.granularity || ts.start || ts.end);
  let dateField = dateKey ? resource.fields.get(dateKey) : undefined;
  if (needsDate && !dateField) {
    throw errors.invalidParameter(`${prefix}.${ts.date_field ? 'date_field' : 'granularity'}`, 'no date field to analyze by');
  }
  if (dateField && dateField.type !== 'datetime' && dateField.type !== 'string') {
    throw errors.invalidParameter(`${prefix}.date_field`, 'the date field must hold dates');
  }
  for (const which of ['start', 'end'] as const) {
    const v = ts[which];
    if (!v) continue;
    const d = parsePeriodBound(v, which);
    if (!d) throw errors.invalidParameterType(`${prefix}.${which}`, 'YYYY, YYYY-MM or YYYY-MM-DD');
    dateField = dateField as NonNullable<typeof dateField>;
    const value = dateField.type === 'datetime' ? d.toISOString() : formatDate(d, dateField.dateFormat ?? 'YYYY-MM-DD');
    extra.push({ key: dateField.key, value, operator: which === 'start' ? 'gte' : 'lt' });
  }
  const filter = [...(query.filter ?? []), ...extra];
  const where = compileWhere({ ...query, filter }, scopeConds, baseScope(resource, 't'), resource.keywordKeys, ctx, prefix, now);

  // group
  const keys: GroupKeyIR[] = (query.group_by ?? []).map((g, i) => {
    const errKey = `${prefix}.group_by[${i}]`;
    if (typeof g === 'string') return { key: g, name: g.split('.').pop() as string, errKey };
    return { key: g.key, name: g.name, errKey };
  });
  if (ts.granularity && dateField) keys.push({ key: dateField.key, name: 'date', bucket: ts.granularity, errKey: `${prefix}.date` });
  const fields: GroupFieldIR[] = Object.entries(query.fields).map(([name, f]) => {
    const errKey = `${prefix}.fields.${name}`;
    if (!(GROUP_OPERATORS as readonly string[]).includes(f.operator)) {
      throw errors.invalidParameter(`${errKey}.operator`, `supported operators: ${GROUP_OPERATORS.join(', ')}`);
    }
    if (f.operator !== 'count' && f.operator !== 'push' && !f.key) throw errors.requiredParameter(`${errKey}.key`);
    const push = f.operator === 'push' && f.fields ? Object.entries(f.fields).map(([n, k]) => ({ key: k, name: n })) : null;
    if (f.operator === 'push' && !f.key && !push?.length) throw errors.requiredParameter(`${errKey}.fields`);
    return { name, operator: f.operator, key: f.operator === 'count' ? null : f.key, fields: push, errKey };
  });
  if (fields.length === 0) throw errors.requiredParameter(`${prefix}.fields`);
  const stages: StageIR[] = [];
  // unwind (upstream since 2.0.199): after the query's filter, each element of the array becomes a row
  // (unwind.filter then keeps the elements that match), before grouping: a group key or a field can
  // name the element (`path`) or a key inside it (`path.sub`).
  if (query.unwind) stages.push({ type: 'unwind', path: query.unwind.path, filter: query.unwind.filter, errKey: `${prefix}.unwind` });
  stages.push({ type: 'group', keys, fields, errKey: prefix });

  // select: a project that drops the group keys unless selected (upstream's exclude_keys).
  if (query.select && Object.keys(query.select).length) {
    stages.push({
      type: 'project',
      errKey: `${prefix}.select`,
      excludeKeys: true,
      onlyKeys: false,
      fields: Object.entries(query.select).map(([name, s]) => {
        const errKey = `${prefix}.select.${name}`;
        if (typeof s === 'string') return { name, key: s, errKey };
        if (!['add', 'subtract', 'multiply', 'divide', 'size', 'sum'].includes(s.operator)) {
          throw errors.invalidParameter(`${errKey}.operator`, 'supported operators: add, subtract, multiply, divide, size, sum');
        }
        if (!s.key && !s.fields?.length) throw errors.requiredParameter(`${errKey}.fields`);
        return { name, operator: s.operator, key: s.key, fields: s.fields, errKey };
      }),
    });
  }

  // field_group: regroup by the other keys; each field becomes [{value, <field_group keys>}] plus _total_<field>.
  if (fieldGroup.length) {
    const fgKeys: GroupKeyIR[] = keys.filter((k) => !fieldGroup.includes(k.name)).map((k) => ({ key: k.name, name: k.name, errKey: `${prefix}.field_group` }));
    const fgFields: GroupFieldIR[] = [];
    for (const f of fields) {
      if (TOTAL_OPS.includes(f.operator)) {
        fgFields.push({
          name: `_total_${f.name}`,
          key: f.name,
          operator: f.operator === 'count' ? 'sum' : f.operator,
          errKey: `${prefix}.field_group`,
        });
      }
      fgFields.push({
        name: f.name,
        operator: 'push',
        fields: [{ key: f.name, name: 'value' }, ...fieldGroup.map((k) => ({ key: k, name: k }))],
        errKey: `${prefix}.field_group`,
      });
    }
    stages.push({ type: 'group', keys: fgKeys, fields: fgFields, errKey: `${prefix}.field_group` });
  }

  if (query.sort?.length) {
    const names = new Set(fields.map((f) => f.name));
    stages.push({
      type: 'sort',
      errKey: `${prefix}.sort`,
      sort: query.sort.map((s) => ({ key: fieldGroup.length && names.has(s.key) ? `_total_${s.key}` : s.key, desc: s.desc })),
    });
  }
  // Never more than the cap: no page.limit reads cap + 1 rows, a larger page.limit is lowered to it;
  // the row past the limit tells `more`.
  // (`page.start` applies with a `page.limit`, as upstream.)
  const cap = opts.maxResults ?? QUERY_LIMITS.results;
  const asked = query.page?.limit && query.page.limit > 0 ? query.page.limit : null;
  const start = query.page?.start ?? 0;
  if (asked !== null && start > 1) stages.push({ type: 'skip', n: start - 1, errKey: `${prefix}.page.start` });
  const limit = Math.min(asked ?? cap, cap);
  stages.push({ type: 'limit', n: limit + 1, errKey: `${prefix}.page.limit` });

  const { ctes, state } = compilePipeline(resource, where, stages, ctx, now);
  const fin = finalSelect(state);
  const text = `WITH ${ctes.join(', ')} SELECT ${fin.list} FROM ${state.alias}${finalOrder(state)}`;
  return { text, values: ctx.values, limit, toObject: fin.toObject };
}

/** analyze / time-series analyze: `{results, more}`; `more` is true when rows remain past `page.limit`. */
export async function runAnalyze(
  db: SqlRunner,
  resource: Resource,
  query: AnalyzeQuery | TimeSeriesAnalyzeQuery,
  scope: Condition[],
  opts: CompileOptions = {},
): Promise<{ results: any[]; more: boolean }> {  
  const c = compileAnalyze(resource, query, scope, opts);
  const rows = await execute(db, c.text, c.values, opts.prefix ?? 'query');
  const results = rows.map((r) => c.toObject(r));
  return { results: results.slice(0, c.limit), more: results.length > c.limit };
}
