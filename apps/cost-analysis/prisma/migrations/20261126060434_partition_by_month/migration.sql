-- Partitions cost and unified_cost by billed_month (YYYY-MM): native declarative partitioning, RANGE,
-- one partition per month (<table>_pYYYYMM) and a default partition (<table>_default). Hand-written:
-- Prisma does not express partitions; the schema change it knows of is the primary key of unified_cost, which
-- must hold the partition key: (domain_id, unified_cost_id, billed_month). See docs/decisions/database.md.
--
-- Existing rows: each table is renamed away, the partitioned table is created with the same columns,
-- defaults and indexes (names as Prisma makes them), a partition is created for every month that holds
-- rows and for the months from last month to 12 months ahead, the rows are copied in, and the old
-- table is dropped. All in one transaction: a failure leaves the tables as they were.
BEGIN;

-- Creates the partition of `p_month` (YYYY-MM) of `parent` (cost or unified_cost) when it is missing,
-- under an advisory lock per table, as a table of its own then attached (ATTACH takes a SHARE UPDATE
-- EXCLUSIVE lock of the parent, which lets writers and readers of other partitions go on). A partition
-- cannot be attached while the default partition holds rows of its month: with `move_rows` those rows
-- are moved into it (only where nothing reads concurrently, as in this migration: a query planned
-- before the move and run after it would see the rows in neither place); without, nothing is created
-- and the rows stay in the default partition. Answers whether it created the partition. Used here and
-- by the app (apps/cost-analysis/src/partitions.ts).
CREATE OR REPLACE FUNCTION ensure_month_partition(parent text, p_month text, move_rows boolean DEFAULT false) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  part text;
  next_month text;
  has_rows boolean;
BEGIN
  IF parent NOT IN ('cost', 'unified_cost') THEN RAISE EXCEPTION 'no month partitions for table %', parent; END IF;
  IF p_month !~ '^\d{4}-(0[1-9]|1[0-2])$' THEN RAISE EXCEPTION 'not a month (YYYY-MM): %', p_month; END IF;
  part := parent || '_p' || replace(p_month, '-', '');
  IF to_regclass(part) IS NOT NULL THEN RETURN false; END IF;
  PERFORM pg_advisory_xact_lock(hashtext('month-partition:' || parent));
  -- Read pg_class with a snapshot taken after the lock (to_regclass may answer from a cache that has
  -- not seen the commit of the session that held the lock).
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = part AND relnamespace = current_schema()::regnamespace) THEN RETURN false; END IF;
  next_month := to_char(to_date(p_month || '-01', 'YYYY-MM-DD') + interval '1 month', 'YYYY-MM');
  IF NOT move_rows THEN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE billed_month >= %L AND billed_month < %L)', parent || '_default', p_month, next_month) INTO has_rows;
    IF has_rows THEN RETURN false; END IF;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  IF move_rows THEN
    EXECUTE format('WITH m AS (DELETE FROM %I WHERE billed_month >= %L AND billed_month < %L RETURNING *) INSERT INTO %I SELECT * FROM m',
      parent || '_default', p_month, next_month, part);
  END IF;
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, p_month, next_month);
  RETURN true;
END $$;

-- cost
ALTER TABLE "cost" RENAME TO "cost_unpartitioned";
ALTER INDEX "cost_domain_id_data_source_id_billed_month_job_id_idx" RENAME TO "cost_unpartitioned_idx";
CREATE TABLE "cost" (LIKE "cost_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("billed_month");
CREATE INDEX "cost_domain_id_data_source_id_billed_month_job_id_idx" ON "cost"("domain_id", "data_source_id", "billed_month", "job_id");
CREATE TABLE "cost_default" PARTITION OF "cost" DEFAULT;
SELECT ensure_month_partition('cost', m, true) FROM (
  SELECT DISTINCT billed_month AS m FROM "cost_unpartitioned"
  UNION SELECT to_char(date_trunc('month', now()) + make_interval(months => i), 'YYYY-MM') FROM generate_series(-1, 12) AS i
) AS months ORDER BY m;
INSERT INTO "cost" SELECT * FROM "cost_unpartitioned";
DROP TABLE "cost_unpartitioned";

-- unified_cost
ALTER TABLE "unified_cost" RENAME TO "unified_cost_unpartitioned";
ALTER TABLE "unified_cost_unpartitioned" RENAME CONSTRAINT "unified_cost_pkey" TO "unified_cost_unpartitioned_pkey";
ALTER INDEX "unified_cost_domain_id_billed_month_workspace_id_idx" RENAME TO "unified_cost_unpartitioned_idx";
CREATE TABLE "unified_cost" (LIKE "unified_cost_unpartitioned" INCLUDING DEFAULTS) PARTITION BY RANGE ("billed_month");
ALTER TABLE "unified_cost" ADD CONSTRAINT "unified_cost_pkey" PRIMARY KEY ("domain_id", "unified_cost_id", "billed_month");
CREATE INDEX "unified_cost_domain_id_billed_month_workspace_id_idx" ON "unified_cost"("domain_id", "billed_month", "workspace_id");
CREATE TABLE "unified_cost_default" PARTITION OF "unified_cost" DEFAULT;
SELECT ensure_month_partition('unified_cost', m, true) FROM (
  SELECT DISTINCT billed_month AS m FROM "unified_cost_unpartitioned"
  UNION SELECT to_char(date_trunc('month', now()) + make_interval(months => i), 'YYYY-MM') FROM generate_series(-1, 12) AS i
) AS months ORDER BY m;
INSERT INTO "unified_cost" SELECT * FROM "unified_cost_unpartitioned";
DROP TABLE "unified_cost_unpartitioned";

ANALYZE "cost";
ANALYZE "unified_cost";
COMMIT;
