-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "domain" (
    "domain_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "domain_pkey" PRIMARY KEY ("domain_id")
);

-- CreateTable
CREATE TABLE "workspace" (
    "domain_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_pkey" PRIMARY KEY ("domain_id","workspace_id")
);

-- CreateTable
CREATE TABLE "user" (
    "domain_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "email" TEXT NOT NULL DEFAULT '',
    "password_hash" TEXT NOT NULL DEFAULT '',
    "auth_type" TEXT NOT NULL DEFAULT 'LOCAL',
    "state" TEXT NOT NULL DEFAULT 'ENABLED',
    "mfa_secret" TEXT,
    "mfa_enabled" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_accessed_at" TIMESTAMPTZ(3),

    CONSTRAINT "user_pkey" PRIMARY KEY ("domain_id","user_id")
);

-- CreateTable
CREATE TABLE "role_binding" (
    "role_binding_id" TEXT NOT NULL,
    "domain_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "role_type" TEXT NOT NULL,
    "role_id" TEXT NOT NULL,
    "resource_group" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "role_binding_pkey" PRIMARY KEY ("role_binding_id")
);

-- CreateTable
CREATE TABLE "project" (
    "domain_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "project_group_id" TEXT NOT NULL DEFAULT '',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_pkey" PRIMARY KEY ("domain_id","project_id")
);

-- CreateTable
CREATE TABLE "project_group" (
    "domain_id" TEXT NOT NULL,
    "project_group_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "users" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "reference_id" TEXT NOT NULL DEFAULT '',
    "is_managed" BOOLEAN NOT NULL DEFAULT false,
    "parent_group_id" TEXT NOT NULL DEFAULT '',
    "trusted_account_id" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_synced_at" TIMESTAMPTZ(3),

    CONSTRAINT "project_group_pkey" PRIMARY KEY ("domain_id","project_group_id")
);

-- CreateIndex
CREATE INDEX "role_binding_domain_id_workspace_id_idx" ON "role_binding"("domain_id", "workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "role_binding_domain_id_user_id_workspace_id_key" ON "role_binding"("domain_id", "user_id", "workspace_id");

-- CreateIndex
CREATE INDEX "project_domain_id_project_group_id_idx" ON "project"("domain_id", "project_group_id");

-- CreateIndex
CREATE INDEX "project_group_domain_id_workspace_id_name_idx" ON "project_group"("domain_id", "workspace_id", "name");

-- CreateIndex
CREATE INDEX "project_group_domain_id_parent_group_id_idx" ON "project_group"("domain_id", "parent_group_id");
