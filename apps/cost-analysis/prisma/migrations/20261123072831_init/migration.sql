-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "exchange_rate" (
    "domain_id" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "rate" DOUBLE PRECISION NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "exchange_rate_pkey" PRIMARY KEY ("domain_id","currency")
);

-- CreateTable
CREATE TABLE "data_source" (
    "domain_id" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "resource_group" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "data_source_type" TEXT NOT NULL DEFAULT 'EXTERNAL',
    "provider" TEXT NOT NULL DEFAULT '',
    "secret_type" TEXT NOT NULL DEFAULT 'MANUAL',
    "secret_filter" JSONB NOT NULL DEFAULT '{}',
    "plugin_info" JSONB NOT NULL DEFAULT '{}',
    "secret_data" JSONB NOT NULL DEFAULT '{}',
    "template" JSONB NOT NULL DEFAULT '{}',
    "permissions" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "cost_tag_keys" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "cost_additional_info_keys" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "cost_data_keys" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_synchronized_at" TIMESTAMPTZ(3),

    CONSTRAINT "data_source_pkey" PRIMARY KEY ("domain_id","data_source_id")
);

-- CreateTable
CREATE TABLE "job" (
    "domain_id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "resource_group" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'IN_PROGRESS',
    "options" JSONB NOT NULL DEFAULT '{}',
    "error_code" TEXT NOT NULL DEFAULT '',
    "error_message" TEXT NOT NULL DEFAULT '',
    "total_tasks" INTEGER NOT NULL DEFAULT 0,
    "remained_tasks" INTEGER NOT NULL DEFAULT 0,
    "changed" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "job_pkey" PRIMARY KEY ("domain_id","job_id")
);

-- CreateTable
CREATE TABLE "job_task" (
    "domain_id" TEXT NOT NULL,
    "job_task_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "resource_group" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "options" JSONB NOT NULL DEFAULT '{}',
    "created_count" INTEGER NOT NULL DEFAULT 0,
    "error_code" TEXT NOT NULL DEFAULT '',
    "error_message" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "job_task_pkey" PRIMARY KEY ("domain_id","job_task_id")
);

-- CreateTable
CREATE TABLE "cost" (
    "domain_id" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "job_id" TEXT NOT NULL,
    "job_task_id" TEXT NOT NULL,
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
    "cost" DOUBLE PRECISION NOT NULL,
    "usage_quantity" DOUBLE PRECISION NOT NULL,
    "billed_date" DATE NOT NULL,
    "billed_month" TEXT NOT NULL,
    "tags" JSONB NOT NULL,
    "additional_info" JSONB NOT NULL
);

-- CreateTable
CREATE TABLE "unified_cost" (
    "domain_id" TEXT NOT NULL,
    "unified_cost_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "service_account_id" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "region_code" TEXT NOT NULL,
    "region_key" TEXT NOT NULL,
    "product" TEXT NOT NULL,
    "usage_type" TEXT NOT NULL,
    "usage_unit" TEXT NOT NULL,
    "billed_year" TEXT NOT NULL,
    "billed_month" TEXT NOT NULL,
    "aggregation_date" TEXT NOT NULL,
    "exchange_date" TEXT NOT NULL,
    "exchange_source" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "is_confirmed" BOOLEAN NOT NULL,
    "cost" JSONB NOT NULL,
    "cost_krw" DOUBLE PRECISION,
    "cost_usd" DOUBLE PRECISION,
    "cost_jpy" DOUBLE PRECISION,
    "service_account_name" TEXT NOT NULL,
    "data_source_name" TEXT NOT NULL,
    "project_name" TEXT NOT NULL,
    "workspace_name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "unified_cost_pkey" PRIMARY KEY ("domain_id","unified_cost_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "data_source_domain_id_name_key" ON "data_source"("domain_id", "name");

-- CreateIndex
CREATE INDEX "job_domain_id_data_source_id_status_idx" ON "job"("domain_id", "data_source_id", "status");

-- CreateIndex
CREATE INDEX "job_task_domain_id_job_id_idx" ON "job_task"("domain_id", "job_id");

-- CreateIndex
CREATE INDEX "cost_domain_id_data_source_id_billed_month_job_id_idx" ON "cost"("domain_id", "data_source_id", "billed_month", "job_id");

-- CreateIndex
CREATE INDEX "unified_cost_domain_id_billed_month_workspace_id_idx" ON "unified_cost"("domain_id", "billed_month", "workspace_id");
