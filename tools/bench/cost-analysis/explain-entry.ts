// What the cost benchmark bundles to print the plan of the analyze the API runs: the query DSL's
// compiler and cost-analysis' unified_cost resource, as the app has them.
export { compileAnalyze } from '@platform/query';
export { unifiedCostResource } from '../../../apps/cost-analysis/src/unified-cost/fields';
