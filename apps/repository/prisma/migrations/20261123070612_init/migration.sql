-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "schema" (
    "domain_id" TEXT NOT NULL,
    "schema_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "sync_mode" TEXT NOT NULL DEFAULT 'NONE',
    "sync_options" JSONB NOT NULL DEFAULT '{}',
    "schema" JSONB NOT NULL DEFAULT '{}',
    "labels" JSONB NOT NULL DEFAULT '[]',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "remote_repository" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_synced_at" TIMESTAMPTZ(3),
    "last_sync_tried_at" TIMESTAMPTZ(3),

    CONSTRAINT "schema_pkey" PRIMARY KEY ("domain_id","schema_id")
);

-- CreateIndex
CREATE INDEX "schema_domain_id_name_idx" ON "schema"("domain_id", "name");

-- CreateIndex
CREATE INDEX "schema_sync_mode_last_sync_tried_at_idx" ON "schema"("sync_mode", "last_sync_tried_at");
