-- Issue #31: the B-tree on cost (domain_id, data_source_id, billed_month, job_id) doubled the WAL a
-- collection writes. A job's rows are appended together, so a BRIN index (a min/max per 32 pages)
-- finds a data source's, job's or task's rows as well for the deletes that need them, at almost no
-- cost per row. autosummarize: ranges a collection appends are summarized without waiting for VACUUM.
-- DropIndex
DROP INDEX "cost_domain_id_data_source_id_billed_month_job_id_idx";

-- CreateIndex
CREATE INDEX "cost_domain_id_data_source_id_job_id_job_task_id_idx" ON "cost" USING BRIN ("domain_id", "data_source_id", "job_id", "job_task_id") WITH (pages_per_range = 32, autosummarize = on);
