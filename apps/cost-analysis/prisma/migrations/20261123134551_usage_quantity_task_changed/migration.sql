-- AlterTable
ALTER TABLE "job_task" ADD COLUMN     "changed" JSONB;

-- AlterTable
ALTER TABLE "unified_cost" ADD COLUMN     "usage_quantity" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- Unified costs built before: their usage_quantity from the collected rows they were built from.
UPDATE "unified_cost" u SET "usage_quantity" = g.q
FROM (
  SELECT domain_id, workspace_id, project_id, service_account_id, data_source_id, provider, region_code, region_key,
         product, usage_type, usage_unit, billed_month, currency, sum(usage_quantity) AS q
  FROM "cost"
  GROUP BY domain_id, workspace_id, project_id, service_account_id, data_source_id, provider, region_code, region_key,
           product, usage_type, usage_unit, billed_month, currency
) AS g
WHERE u.domain_id = g.domain_id AND u.workspace_id = g.workspace_id AND u.project_id = g.project_id
  AND u.service_account_id = g.service_account_id AND u.data_source_id = g.data_source_id AND u.provider = g.provider
  AND u.region_code = g.region_code AND u.region_key = g.region_key AND u.product = g.product
  AND u.usage_type = g.usage_type AND u.usage_unit = g.usage_unit AND u.billed_month = g.billed_month
  AND u.currency = g.currency AND g.q IS NOT NULL;
