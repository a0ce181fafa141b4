-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "cloud_service" (
    "domain_id" TEXT NOT NULL,
    "cloud_service_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL DEFAULT '',
    "name" TEXT NOT NULL DEFAULT '',
    "state" TEXT NOT NULL DEFAULT 'ACTIVE',
    "account" TEXT NOT NULL DEFAULT '',
    "instance_type" TEXT NOT NULL DEFAULT '',
    "instance_size" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "ip_addresses" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "provider" TEXT NOT NULL,
    "cloud_service_group" TEXT NOT NULL,
    "cloud_service_type" TEXT NOT NULL,
    "ref_cloud_service_type" TEXT NOT NULL,
    "data" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "reference" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "tag_keys" JSONB NOT NULL DEFAULT '{}',
    "collection_info" JSONB NOT NULL DEFAULT '{}',
    "region_code" TEXT NOT NULL DEFAULT '',
    "launched_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "cloud_service_pkey" PRIMARY KEY ("domain_id","cloud_service_id")
);

-- CreateTable
CREATE TABLE "cloud_service_type" (
    "domain_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "cloud_service_group" TEXT NOT NULL,
    "cloud_service_type" TEXT NOT NULL,
    "cloud_service_type_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cloud_service_type_pkey" PRIMARY KEY ("domain_id","workspace_id","provider","cloud_service_group","cloud_service_type")
);

-- CreateTable
CREATE TABLE "cloud_service_export" (
    "token_hash" TEXT NOT NULL,
    "domain_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "cloud_service_export_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_provider_cloud_service_group_cloud__idx" ON "cloud_service"("domain_id", "provider", "cloud_service_group", "cloud_service_type");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_cloud_service_type_idx" ON "cloud_service"("domain_id", "cloud_service_type");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_cloud_service_group_idx" ON "cloud_service"("domain_id", "cloud_service_group");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_region_code_idx" ON "cloud_service"("domain_id", "region_code");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_project_id_idx" ON "cloud_service"("domain_id", "project_id");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_workspace_id_idx" ON "cloud_service"("domain_id", "workspace_id");

-- CreateIndex
CREATE INDEX "cloud_service_domain_id_created_at_idx" ON "cloud_service"("domain_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "cloud_service_type_domain_id_cloud_service_type_id_key" ON "cloud_service_type"("domain_id", "cloud_service_type_id");

-- CreateIndex
CREATE INDEX "cloud_service_export_expires_at_idx" ON "cloud_service_export"("expires_at");

-- Hand-written: GIN indexes for the JSON and array filters (containment: tags/data `@>`, ip_addresses `@>`/`&&`).
CREATE INDEX "cloud_service_tags_gin_idx" ON "cloud_service" USING GIN ("tags" jsonb_path_ops);
CREATE INDEX "cloud_service_data_gin_idx" ON "cloud_service" USING GIN ("data" jsonb_path_ops);
CREATE INDEX "cloud_service_ip_addresses_gin_idx" ON "cloud_service" USING GIN ("ip_addresses");
