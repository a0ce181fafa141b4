-- Issue #31: a narrower cost row. Each row named its job task with four text ids (domain_id,
-- data_source_id, job_id, job_task_id: ~70 bytes repeated on every row); now job_task numbers its tasks
-- (task_no, a sequence) and a cost row carries that one integer. Columns are ordered fixed-width first,
-- so the row has no alignment padding. See docs/decisions/cost-analysis.md "A narrower cost row".
--
-- Existing rows: cost and its partitions are renamed away, the new partitioned cost is made (its
-- partitions by ensure_month_partition, as the partitioning migration did), every row is copied in with
-- its task's number, in task order (so that a BRIN block range keeps holding one task's rows), and the
-- old table is dropped. A cost row whose task does not exist (none should: only a task's COPY writes
-- cost) stops the migration rather than being lost. All in one transaction.
BEGIN;

ALTER TABLE "job_task" ADD COLUMN "task_no" SERIAL NOT NULL;
CREATE UNIQUE INDEX "job_task_task_no_key" ON "job_task"("task_no");

DO $$
DECLARE
  r record;
BEGIN
  IF EXISTS (SELECT 1 FROM "cost" c WHERE NOT EXISTS (
    SELECT 1 FROM "job_task" t WHERE t.domain_id = c.domain_id AND t.job_task_id = c.job_task_id AND t.job_id = c.job_id AND t.data_source_id = c.data_source_id)) THEN
    RAISE EXCEPTION 'cost rows without their job task: cannot name them by task_no';
  END IF;
  FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '"cost"'::regclass LOOP
    EXECUTE format('ALTER TABLE %I RENAME TO %I', r.relname, 'cost_before_task_no' || substr(r.relname, 5));
  END LOOP;
END $$;
ALTER TABLE "cost" RENAME TO "cost_before_task_no";
ALTER INDEX "cost_domain_id_data_source_id_job_id_job_task_id_idx" RENAME TO "cost_before_task_no_idx";

CREATE TABLE "cost" (
    "task_no" INTEGER NOT NULL,
    "billed_date" DATE NOT NULL,
    "cost" DOUBLE PRECISION NOT NULL,
    "usage_quantity" DOUBLE PRECISION NOT NULL,
    "billed_month" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "service_account_id" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "region_code" TEXT NOT NULL,
    "region_key" TEXT NOT NULL,
    "product" TEXT NOT NULL,
    "usage_type" TEXT NOT NULL,
    "usage_unit" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "tags" JSONB NOT NULL,
    "additional_info" JSONB NOT NULL
) PARTITION BY RANGE ("billed_month");
CREATE INDEX "cost_task_no_idx" ON "cost" USING BRIN ("task_no") WITH (pages_per_range = 32, autosummarize = on);
CREATE TABLE "cost_default" PARTITION OF "cost" DEFAULT;
SELECT ensure_month_partition('cost', m, true) FROM (
  SELECT DISTINCT billed_month AS m FROM "cost_before_task_no"
  UNION SELECT to_char(date_trunc('month', now()) + make_interval(months => i), 'YYYY-MM') FROM generate_series(-1, 12) AS i
) AS months ORDER BY m;
INSERT INTO "cost" ("task_no", "billed_date", "cost", "usage_quantity", "billed_month", "workspace_id", "project_id", "service_account_id",
    "account", "provider", "region_code", "region_key", "product", "usage_type", "usage_unit", "currency", "tags", "additional_info")
  SELECT t.task_no, c.billed_date, c.cost, c.usage_quantity, c.billed_month, c.workspace_id, c.project_id, c.service_account_id,
    c.account, c.provider, c.region_code, c.region_key, c.product, c.usage_type, c.usage_unit, c.currency, c.tags, c.additional_info
  FROM "cost_before_task_no" c JOIN "job_task" t ON t.domain_id = c.domain_id AND t.job_task_id = c.job_task_id
  ORDER BY t.task_no;
DROP TABLE "cost_before_task_no";

ANALYZE "cost";
COMMIT;
