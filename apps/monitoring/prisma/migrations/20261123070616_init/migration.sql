-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "data_source" (
    "domain_id" TEXT NOT NULL,
    "data_source_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "monitoring_type" TEXT NOT NULL,
    "provider" TEXT NOT NULL DEFAULT '',
    "capability" JSONB NOT NULL DEFAULT '{}',
    "plugin_info" JSONB NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "data_source_pkey" PRIMARY KEY ("domain_id","data_source_id")
);

-- CreateTable
CREATE TABLE "webhook" (
    "domain_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "access_key" TEXT NOT NULL,
    "webhook_url" TEXT NOT NULL,
    "capability" JSONB NOT NULL DEFAULT '{}',
    "plugin_info" JSONB NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "requests_total" BIGINT NOT NULL DEFAULT 0,
    "requests_error" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_pkey" PRIMARY KEY ("domain_id","webhook_id")
);

-- CreateTable
CREATE TABLE "webhook_delivery" (
    "delivery_id" TEXT NOT NULL,
    "domain_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "event_count" INTEGER NOT NULL,
    "error" TEXT NOT NULL DEFAULT '',
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("delivery_id")
);

-- CreateTable
CREATE TABLE "alert" (
    "domain_id" TEXT NOT NULL,
    "alert_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "event_key" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "last_event_at" TIMESTAMPTZ(3) NOT NULL,
    "resolved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_pkey" PRIMARY KEY ("domain_id","alert_id")
);

-- CreateTable
CREATE TABLE "event" (
    "domain_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "event_key" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "severity" TEXT NOT NULL DEFAULT 'NONE',
    "rule" TEXT NOT NULL DEFAULT '',
    "image_url" TEXT NOT NULL DEFAULT '',
    "resource" JSONB NOT NULL DEFAULT '{}',
    "resource_id" TEXT NOT NULL DEFAULT '',
    "provider" TEXT NOT NULL DEFAULT '',
    "account" TEXT NOT NULL DEFAULT '',
    "additional_info" JSONB NOT NULL DEFAULT '{}',
    "raw_data" JSONB NOT NULL DEFAULT '{}',
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "alert_id" TEXT NOT NULL DEFAULT '',
    "webhook_id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "delivery_seq" INTEGER NOT NULL,
    "occurred_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "event_pkey" PRIMARY KEY ("domain_id","event_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_webhook_id_key" ON "webhook"("webhook_id");

-- CreateIndex
CREATE INDEX "webhook_domain_id_workspace_id_project_id_idx" ON "webhook"("domain_id", "workspace_id", "project_id");

-- CreateIndex
CREATE INDEX "webhook_delivery_domain_id_webhook_id_processed_at_idx" ON "webhook_delivery"("domain_id", "webhook_id", "processed_at");

-- CreateIndex
CREATE INDEX "alert_domain_id_project_id_event_key_last_event_at_idx" ON "alert"("domain_id", "project_id", "event_key", "last_event_at" DESC);

-- CreateIndex
CREATE INDEX "event_domain_id_workspace_id_created_at_idx" ON "event"("domain_id", "workspace_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "event_domain_id_alert_id_idx" ON "event"("domain_id", "alert_id");

-- CreateIndex
CREATE INDEX "event_domain_id_resource_id_idx" ON "event"("domain_id", "resource_id");

-- CreateIndex
CREATE UNIQUE INDEX "event_delivery_id_delivery_seq_key" ON "event"("delivery_id", "delivery_seq");
