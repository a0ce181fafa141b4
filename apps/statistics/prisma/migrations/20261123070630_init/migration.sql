-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "storage" (
    "domain_id" TEXT NOT NULL,
    "storage_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "options" JSONB NOT NULL DEFAULT '{}',
    "capability" JSONB NOT NULL DEFAULT '{}',
    "plugin_info" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "storage_pkey" PRIMARY KEY ("domain_id","storage_id")
);

-- CreateTable
CREATE TABLE "secret" (
    "domain_id" TEXT NOT NULL,
    "secret_id" TEXT NOT NULL,
    "storage_id" TEXT NOT NULL,
    "schema" TEXT NOT NULL DEFAULT '',
    "key_id" TEXT NOT NULL,
    "iv" TEXT NOT NULL,
    "ciphertext" TEXT NOT NULL,
    "auth_tag" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "secret_pkey" PRIMARY KEY ("domain_id","secret_id")
);

-- CreateIndex
CREATE INDEX "storage_domain_id_name_idx" ON "storage"("domain_id", "name");

-- CreateIndex
CREATE INDEX "secret_domain_id_storage_id_idx" ON "secret"("domain_id", "storage_id");
