import { defineResource, type FieldSpec } from '@platform/query';
import { TYPED_CURRENCIES } from './builder';

const str = (column: string): FieldSpec => ({ column, type: 'string', notNull: true });

/**
 * unified_cost as the query DSL sees it. `cost.KRW`, `cost.USD` and `cost.JPY` are float8 columns (the
 * keys match before the `cost` JSON field, so analyze sums a plain column); other currencies of `cost`
 * go through its JSON. billed_month is the analyze date field (`YYYY-MM`, as upstream's date_field).
 */
export const unifiedCostResource = defineResource({
  table: 'unified_cost',
  idKey: 'unified_cost_id',
  keywordKeys: ['provider', 'product', 'workspace_name', 'project_name', 'unified_cost_id'],
  dateKey: 'billed_month',
  fields: {
    unified_cost_id: str('unified_cost_id'),
    cost: { column: 'cost', type: 'json' },
    ...Object.fromEntries(TYPED_CURRENCIES.map((c) => [`cost.${c}`, { column: `cost_${c.toLowerCase()}`, type: 'number' } satisfies FieldSpec])),
    billed_month: { ...str('billed_month'), dateFormat: 'YYYY-MM' },
    billed_year: { ...str('billed_year'), dateFormat: 'YYYY' },
    aggregation_date: str('aggregation_date'),
    exchange_date: str('exchange_date'),
    exchange_source: str('exchange_source'),
    currency: str('currency'),
    is_confirmed: { column: 'is_confirmed', type: 'boolean', notNull: true },
    provider: str('provider'),
    region_code: str('region_code'),
    region_key: str('region_key'),
    product: str('product'),
    usage_type: str('usage_type'),
    usage_unit: str('usage_unit'),
    usage_quantity: { column: 'usage_quantity', type: 'number', notNull: true },
    service_account_name: str('service_account_name'),
    data_source_name: str('data_source_name'),
    project_name: str('project_name'),
    workspace_name: str('workspace_name'),
    domain_id: str('domain_id'),
    workspace_id: str('workspace_id'),
    project_id: str('project_id'),
    data_source_id: str('data_source_id'),
    service_account_id: str('service_account_id'),
    created_at: { column: 'created_at', type: 'datetime', notNull: true },
  },
});
