export { defineResource, splitKey } from './resource';
export type { CompiledField, FieldSpec, FieldType, Resource, ResourceSpec } from './resource';
export {
  AnalyzeQuerySchema,
  ConditionSchema,
  GranularitySchema,
  PageSchema,
  QuerySchema,
  SortSchema,
  StatisticsQuerySchema,
  TimeSeriesAnalyzeQuerySchema,
  UnwindSchema,
  parseAnalyzeQuery,
  parseQuery,
  parseStatisticsQuery,
  parseTimeSeriesAnalyzeQuery,
  parseWith,
  KeySchema,
  QUERY_LIMITS,
} from './schemas';
export type { AnalyzeQuery, Condition, Granularity, Page, Query, SortItem, StatisticsQuery, TimeSeriesAnalyzeQuery, Unwind } from './schemas';
export type { SqlRunner } from './base';
export { compileList, compileListRows, runList, runListRows } from './list';
export type { CompiledList, CompiledListRows, CompileOptions } from './list';
export { compileStat, runStat } from './stat';
export type { CompiledStat } from './stat';
export { compileAnalyze, runAnalyze } from './analyze';
export type { CompiledAnalyze } from './analyze';
export { applyOnly, applyGetOnly, OnlySchema, resolveOnly } from './only';
export { FILTER_OPERATORS } from './operators';
export { parseIso8601, parseTimediff } from './time';
export type { CompiledSql } from './sql';
export { listInMemory } from './memory';
export { eqConditions } from './conditions';
