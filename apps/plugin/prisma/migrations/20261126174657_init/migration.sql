-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "supervisor" (
    "domain_id" TEXT NOT NULL,
    "supervisor_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "is_public" BOOLEAN NOT NULL DEFAULT false,
    "secret_digest" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '[]',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "supervisor_pkey" PRIMARY KEY ("supervisor_id")
);

-- CreateTable
CREATE TABLE "installed_plugin" (
    "supervisor_id" TEXT NOT NULL,
    "domain_id" TEXT NOT NULL,
    "is_public" BOOLEAN NOT NULL DEFAULT false,
    "supervisor_name" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "plugin_id" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL DEFAULT '',
    "endpoints" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "installed_plugin_pkey" PRIMARY KEY ("supervisor_id","plugin_id","version")
);

-- CreateIndex
CREATE INDEX "supervisor_domain_id_name_idx" ON "supervisor"("domain_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "supervisor_domain_id_hostname_key" ON "supervisor"("domain_id", "hostname");

-- CreateIndex
CREATE INDEX "installed_plugin_domain_id_plugin_id_idx" ON "installed_plugin"("domain_id", "plugin_id");

-- CreateIndex
CREATE INDEX "installed_plugin_is_public_plugin_id_idx" ON "installed_plugin"("is_public", "plugin_id");

-- AddForeignKey
ALTER TABLE "installed_plugin" ADD CONSTRAINT "installed_plugin_supervisor_id_fkey" FOREIGN KEY ("supervisor_id") REFERENCES "supervisor"("supervisor_id") ON DELETE CASCADE ON UPDATE CASCADE;
